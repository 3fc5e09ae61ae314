UPDATE tool_calls SET outcome = 'refused' WHERE outcome = 'denied';
ALTER TABLE tool_calls DROP CONSTRAINT tool_calls_outcome_check,
    ADD CONSTRAINT tool_calls_outcome_check CHECK (outcome IN ('ok', 'error', 'refused', 'interrupted'));
UPDATE runs SET status = 'running' WHERE status = 'waiting';
ALTER TABLE runs DROP CONSTRAINT runs_status_check,
    ADD CONSTRAINT runs_status_check
    CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled'));
DROP TABLE approval_policies;
DROP TABLE approval_requests;
