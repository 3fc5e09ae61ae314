-- Followers of a run's event stream are woken by a notification on the channel
-- guilds_run_events (payload: the run id) when a message is written or the
-- run's status changes; delivery happens at commit, so what they re-read is there.
CREATE FUNCTION notify_run_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'runs' THEN
        PERFORM pg_notify('guilds_run_events', NEW.id::text);
    ELSE
        PERFORM pg_notify('guilds_run_events', NEW.run_id::text);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER messages_notify_run_event AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION notify_run_event();
CREATE TRIGGER runs_notify_run_event AFTER UPDATE OF status ON runs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION notify_run_event();
