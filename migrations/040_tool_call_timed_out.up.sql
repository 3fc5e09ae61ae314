-- A call whose service did not answer within its bound is recorded as
-- timed_out, apart from a failure (issue 33: the audit trail's outcomes).
ALTER TABLE tool_calls DROP CONSTRAINT tool_calls_outcome_check,
    ADD CONSTRAINT tool_calls_outcome_check
    CHECK (outcome IN ('ok', 'error', 'refused', 'interrupted', 'denied', 'timed_out'));
