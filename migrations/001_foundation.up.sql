CREATE TABLE organisations (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    slug       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE guilds (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organisation_id, name)
);

CREATE TABLE agents (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guild_id   uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    name       text NOT NULL,
    model      text NOT NULL DEFAULT '',
    prompt     text NOT NULL DEFAULT '',
    -- flags: browser, coding, scripting, memory (bool) and max_scripts (int, default 10)
    config     jsonb NOT NULL DEFAULT '{"browser":false,"coding":false,"scripting":true,"memory":true,"max_scripts":10}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (guild_id, name)
);
CREATE INDEX agents_guild_id_idx ON agents (guild_id);

CREATE TABLE users (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name           text NOT NULL,
    email          text UNIQUE,
    instance_admin boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- API tokens are stored as SHA-256 hashes; the plain token is shown once.
CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '',
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE TABLE memberships (
    user_id         uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    role            text NOT NULL CHECK (role IN ('operator')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, organisation_id)
);
CREATE INDEX memberships_org_idx ON memberships (organisation_id);
