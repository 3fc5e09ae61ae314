-- The connector catalog and the logins connected to it.
CREATE TABLE mcp_servers (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug        text NOT NULL UNIQUE,
    name        text NOT NULL,
    kind        text NOT NULL DEFAULT 'remote' CHECK (kind IN ('remote', 'adapter', 'github')),
    transport   text NOT NULL CHECK (transport IN ('http', 'sse', 'stdio')),
    url         text NOT NULL DEFAULT '',
    auth        text NOT NULL CHECK (auth IN ('none', 'token', 'oauth')),
    config      jsonb NOT NULL DEFAULT '{}',
    description text NOT NULL DEFAULT '',
    limitations text NOT NULL DEFAULT '',
    setup_hint  text NOT NULL DEFAULT '',
    copy_source text NOT NULL DEFAULT 'seed' CHECK (copy_source IN ('seed', 'admin')),
    published   boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- owner_id is NULL for platform scope, else the organisation, guild or agent id.
CREATE TABLE mcp_connections (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    server_id    uuid NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
    owner_scope  text NOT NULL CHECK (owner_scope IN ('platform', 'organisation', 'guild', 'agent')),
    owner_id     uuid,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'connected', 'disconnected')),
    account_hint text NOT NULL DEFAULT '',
    config       jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((owner_scope = 'platform') = (owner_id IS NULL))
);
CREATE UNIQUE INDEX mcp_connections_owner_uq
    ON mcp_connections (server_id, owner_scope, coalesce(owner_id, '00000000-0000-0000-0000-000000000000'::uuid));
