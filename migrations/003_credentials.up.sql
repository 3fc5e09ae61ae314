-- Encrypted credentials of connections, with the health of their refresh.
-- ciphertext is AES-256-GCM under the key named by key_id (internal/secret);
-- version increases on every write and fences concurrent refreshes.
CREATE TABLE connection_credentials (
    connection_id   uuid PRIMARY KEY REFERENCES mcp_connections(id) ON DELETE CASCADE,
    key_id          text NOT NULL,
    ciphertext      bytea NOT NULL,
    version         bigint NOT NULL DEFAULT 1,
    expires_at      timestamptz,
    state           text NOT NULL DEFAULT 'healthy'
                    CHECK (state IN ('healthy', 'refresh_failing', 'reconnect_required', 'disconnected')),
    attempts        integer NOT NULL DEFAULT 0,
    next_retry_at   timestamptz,
    last_success_at timestamptz,
    last_failure_at timestamptz,
    last_error_code text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- `guilds keys rotate` walks the rows not yet under the active key.
CREATE INDEX connection_credentials_key_id_idx ON connection_credentials (key_id);

-- OAuth logins waiting for their callback. state_hash is SHA-256 of the state
-- parameter; the PKCE verifier is encrypted. A row is consumed exactly once.
CREATE TABLE connection_oauth_pending (
    state_hash    bytea PRIMARY KEY,
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    redirect_uri  text NOT NULL,
    key_id        text NOT NULL,
    verifier      bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX connection_oauth_pending_connection_idx ON connection_oauth_pending (connection_id);
