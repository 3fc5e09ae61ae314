UPDATE tool_calls SET outcome = 'error' WHERE outcome = 'timed_out';
ALTER TABLE tool_calls DROP CONSTRAINT tool_calls_outcome_check,
    ADD CONSTRAINT tool_calls_outcome_check
    CHECK (outcome IN ('ok', 'error', 'refused', 'interrupted', 'denied'));
