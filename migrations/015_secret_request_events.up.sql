-- A secret request opened or answered wakes its run's event stream, so an
-- operator following the run sees it while the call waits.
CREATE TRIGGER secret_requests_notify_run_event AFTER INSERT OR UPDATE OF status ON secret_requests
    FOR EACH ROW EXECUTE FUNCTION notify_run_event();
