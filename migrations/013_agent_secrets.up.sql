-- Agent secrets: named values sealed with the credential keyring, owned at an
-- organisation, guild or agent, granted to agents along the chain, exposed as
-- environment variables of their shell commands and redacted from every run
-- they reach (docs/adr/0901-agent-secrets.md).
CREATE TABLE agent_secrets (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_scope     text NOT NULL CHECK (owner_scope IN ('organisation', 'guild', 'agent')),
    owner_id        uuid NOT NULL,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid REFERENCES agents(id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name ~ '^[A-Z][A-Z0-9_]{0,63}$'),
    key_id          text NOT NULL,
    ciphertext      bytea NOT NULL,
    set_by          text NOT NULL,
    set_at          timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_scope, owner_id, name),
    CHECK ((owner_scope = 'organisation' AND owner_id = organisation_id AND guild_id IS NULL AND agent_id IS NULL)
        OR (owner_scope = 'guild' AND owner_id = guild_id AND agent_id IS NULL)
        OR (owner_scope = 'agent' AND owner_id = agent_id AND guild_id IS NOT NULL))
);
CREATE INDEX agent_secrets_org ON agent_secrets (organisation_id);
CREATE INDEX agent_secrets_key ON agent_secrets (key_id);

-- A grant row turns a secret on or off for the agents at and below a scope;
-- the most specific row of an agent's chain wins.
CREATE TABLE agent_secret_grants (
    secret_id  uuid NOT NULL REFERENCES agent_secrets(id) ON DELETE CASCADE,
    scope      text NOT NULL CHECK (scope IN ('organisation', 'guild', 'agent')),
    scope_id   uuid NOT NULL,
    guild_id   uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id   uuid REFERENCES agents(id) ON DELETE CASCADE,
    enabled    boolean NOT NULL,
    updated_by text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (secret_id, scope, scope_id)
);
CREATE INDEX agent_secret_grants_scope ON agent_secret_grants (scope_id);

-- Who changed what and when; never a value. Rows outlive the secret.
CREATE TABLE agent_secret_audit (
    id              bigserial PRIMARY KEY,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    secret_id       uuid,
    owner_scope     text NOT NULL,
    owner_id        uuid NOT NULL,
    name            text NOT NULL,
    action          text NOT NULL,
    actor           text NOT NULL,
    detail          jsonb NOT NULL DEFAULT '{}',
    at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_secret_audit_org ON agent_secret_audit (organisation_id, at DESC);

-- The arguments of a secret_store call, sealed by the model activity so that
-- they never cross the workflow boundary; the tool activity opens them.
CREATE TABLE secret_call_arguments (
    run_id     uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    call_id    text NOT NULL,
    key_id     text NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX secret_call_arguments_key ON secret_call_arguments (key_id);

-- secret_request: an agent in a direct run asks an operator for a secret.
CREATE TABLE secret_requests (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id          uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq             integer NOT NULL,
    agent_id        uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name ~ '^[A-Z][A-Z0-9_]{0,63}$'),
    reason          text NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'provided', 'declined')),
    answered_by     text NOT NULL DEFAULT '',
    answered_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, seq)
);
CREATE INDEX secret_requests_org ON secret_requests (organisation_id, status, created_at DESC);
