DROP TRIGGER IF EXISTS runs_notify_run_event ON runs;
DROP TRIGGER IF EXISTS messages_notify_run_event ON messages;
DROP FUNCTION IF EXISTS notify_run_event();
