-- Run lists page newest first by (created_at, id) at an agent, a guild and an
-- organisation (issue 34 item 6): one keyset index per scope.
DROP INDEX IF EXISTS runs_agent_created_idx;
CREATE INDEX runs_agent_created_idx ON runs (agent_id, created_at DESC, id DESC);
CREATE INDEX runs_guild_created_idx ON runs (guild_id, created_at DESC, id DESC);
CREATE INDEX runs_org_created_idx ON runs (organisation_id, created_at DESC, id DESC);
