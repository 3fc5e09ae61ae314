-- A schedule's instruction is optional; a run it starts opens with the
-- description when the instruction is empty (issue 31, item 11).
ALTER TABLE schedules DROP CONSTRAINT schedules_instruction_check;
ALTER TABLE schedules ADD CONSTRAINT schedules_instruction_check CHECK (char_length(instruction) <= 2000);
ALTER TABLE schedules ALTER COLUMN instruction SET DEFAULT '';
