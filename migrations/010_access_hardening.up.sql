-- API tokens may expire (NULL: never); a disabled user's tokens all fail.
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;
ALTER TABLE users ADD COLUMN disabled_at timestamptz;

-- Who started a connection's latest OAuth login: the user, and the SHA-256
-- of the nonce the API set in the starting browser's cookie. The callback
-- completes the login only for that browser (or that user's API token).
CREATE TABLE connection_oauth_starts (
    connection_id uuid PRIMARY KEY REFERENCES mcp_connections(id) ON DELETE CASCADE,
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    browser_hash  bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- The authorization server's issuer a pending login was started with, so a
-- callback's RFC 9207 iss can be checked against it.
ALTER TABLE connection_oauth_pending ADD COLUMN issuer text;
