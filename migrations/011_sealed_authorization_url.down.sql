ALTER TABLE connection_oauth_pending DROP COLUMN IF EXISTS authorization_url;
