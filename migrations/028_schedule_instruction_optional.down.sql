UPDATE schedules SET instruction = description WHERE instruction = '';
ALTER TABLE schedules ALTER COLUMN instruction DROP DEFAULT;
ALTER TABLE schedules DROP CONSTRAINT schedules_instruction_check;
ALTER TABLE schedules ADD CONSTRAINT schedules_instruction_check CHECK (instruction <> '' AND char_length(instruction) <= 2000);
