-- The authorization URL of a pending OAuth login, sealed under the row's
-- key_id like the verifier: the connect workflow's history holds only a
-- marker, and the API reads the URL from here (connectors.Engine.PendingAuthorizationURL).
ALTER TABLE connection_oauth_pending ADD COLUMN authorization_url bytea;
