ALTER TABLE connection_oauth_pending DROP COLUMN IF EXISTS issuer;
DROP TABLE IF EXISTS connection_oauth_starts;
ALTER TABLE users DROP COLUMN IF EXISTS disabled_at;
ALTER TABLE api_tokens DROP COLUMN IF EXISTS expires_at;
