-- A server's form recorded or settled wakes its run's event stream. A run
-- that follows a task already reads 'waiting', so the form its task asks for
-- changes no status: without this, a follower of the run (the run's page, a
-- test) would not learn that a form now waits in the inbox.
CREATE TRIGGER input_requests_notify_run_event AFTER INSERT OR UPDATE OF state ON input_requests
    FOR EACH ROW EXECUTE FUNCTION notify_run_event();
