DROP TRIGGER IF EXISTS secret_requests_notify_run_event ON secret_requests;
