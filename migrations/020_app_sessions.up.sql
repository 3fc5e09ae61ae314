-- Browser sessions of the operator app. A session is opened by exchanging
-- an API token; the cookie carries the plain session id, only its SHA-256 is
-- stored here, with the SHA-256 of the CSRF token every mutating request made
-- with the cookie must repeat in X-CSRF-Token.
CREATE TABLE app_sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_id     uuid REFERENCES api_tokens(id) ON DELETE CASCADE,
    session_hash bytea NOT NULL UNIQUE,
    csrf_hash    bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX app_sessions_user ON app_sessions (user_id);
