DROP INDEX IF EXISTS runs_org_created_idx;
DROP INDEX IF EXISTS runs_guild_created_idx;
DROP INDEX IF EXISTS runs_agent_created_idx;
CREATE INDEX runs_agent_created_idx ON runs (agent_id, created_at DESC);
