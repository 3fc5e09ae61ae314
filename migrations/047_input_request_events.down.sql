DROP TRIGGER IF EXISTS input_requests_notify_run_event ON input_requests;
