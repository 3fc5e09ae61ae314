DROP TABLE IF EXISTS github_guild_settings;
ALTER TABLE github_issued_tokens DROP COLUMN IF EXISTS revoked_at;
