-- A call whose server runs it as a task is followed by the run workflow
-- (ADR 0625): one row per such call, so the run reads "waiting" while it is
-- followed and says what it waits for (issue 32). The call's own result
-- lands in tool_calls; a row with no result there is still followed.
CREATE TABLE run_tasks (
    run_id     uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq        integer NOT NULL CHECK (seq >= 1),
    tool_name  text NOT NULL,
    task_id    text NOT NULL,
    status     text NOT NULL DEFAULT 'working',
    started_at timestamptz NOT NULL DEFAULT now(),
    polled_at  timestamptz,
    PRIMARY KEY (run_id, seq)
);
-- A run's followers re-read it when a task starts or changes status.
CREATE TRIGGER run_tasks_notify_run_event AFTER INSERT ON run_tasks
    FOR EACH ROW EXECUTE FUNCTION notify_run_event();
CREATE TRIGGER run_tasks_status_notify_run_event AFTER UPDATE OF status ON run_tasks
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION notify_run_event();

-- How long the run waits for the answer to a secret_request, fixed when the
-- request opens from the approvals' waiting setting (ADR 0518).
ALTER TABLE secret_requests ADD COLUMN wait_until timestamptz;
