-- Installation tokens a coding generation was given, sealed, so that every
-- worker (not only the one that issued them) redacts them from results until
-- they expire.
CREATE TABLE github_issued_tokens (
    id         bigserial PRIMARY KEY,
    agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    key_id     text NOT NULL,
    ciphertext bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX github_issued_tokens_agent ON github_issued_tokens (agent_id, expires_at);
