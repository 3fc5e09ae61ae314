ALTER TABLE runs DROP COLUMN IF EXISTS stop_reason;
DROP INDEX IF EXISTS audit_events_calls_agent_at;
DROP INDEX IF EXISTS audit_events_calls_guild_at;
DROP INDEX IF EXISTS audit_events_calls_org_at;
DROP TABLE IF EXISTS budget_limits;
