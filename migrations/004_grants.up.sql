-- Grants: the published tool copy of catalog servers, the tools each login
-- listed, bindings (which scope offers what) and the record of defaults the
-- platform wrote once, so that it never writes them over an operator's change.

-- Published tool copy of a catalog server (seeded from the manifests or
-- edited by the instance admin).
CREATE TABLE mcp_catalog_tools (
    server_id    uuid NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
    name         text NOT NULL,
    description  text NOT NULL DEFAULT '',
    input_schema jsonb NOT NULL DEFAULT '{"type":"object"}',
    position     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (server_id, name)
);

-- Tools one connection listed. name is the model-facing {slug}_{name}.
CREATE TABLE mcp_tools (
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    remote_name   text NOT NULL,
    name          text NOT NULL,
    description   text NOT NULL DEFAULT '',
    input_schema  jsonb NOT NULL DEFAULT '{"type":"object"}',
    listed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, remote_name)
);
CREATE INDEX mcp_tools_name_idx ON mcp_tools (name);

-- One row per (scope, catalog item). Exactly one of organisation_id, guild_id,
-- agent_id is set for a non-platform scope; their foreign keys cascade the
-- row away with its scope. server_id is set for mcp and mcp_tool rows so that
-- deleting a catalog server takes its grants along; connection_id (mcp only)
-- cascades with the connection.
CREATE TABLE bindings (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    scope           text NOT NULL CHECK (scope IN ('platform', 'organisation', 'guild', 'agent')),
    organisation_id uuid REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid REFERENCES agents(id) ON DELETE CASCADE,
    scope_id        uuid GENERATED ALWAYS AS (coalesce(agent_id, guild_id, organisation_id)) STORED,
    catalog_kind    text NOT NULL CHECK (catalog_kind IN ('native_tool', 'mcp', 'mcp_tool', 'artifact_grant')),
    catalog_id      text NOT NULL,
    server_id       uuid REFERENCES mcp_servers(id) ON DELETE CASCADE,
    enabled         boolean NOT NULL,
    connection_id   uuid REFERENCES mcp_connections(id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (CASE scope
        WHEN 'platform' THEN organisation_id IS NULL AND guild_id IS NULL AND agent_id IS NULL
        WHEN 'organisation' THEN organisation_id IS NOT NULL AND guild_id IS NULL AND agent_id IS NULL
        WHEN 'guild' THEN guild_id IS NOT NULL AND organisation_id IS NULL AND agent_id IS NULL
        ELSE agent_id IS NOT NULL AND organisation_id IS NULL AND guild_id IS NULL END),
    CHECK (connection_id IS NULL OR catalog_kind = 'mcp'),
    CHECK ((server_id IS NOT NULL) = (catalog_kind IN ('mcp', 'mcp_tool')))
);
CREATE UNIQUE INDEX bindings_scope_item_uq
    ON bindings (scope, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), catalog_kind, catalog_id);
CREATE INDEX bindings_scope_id_idx ON bindings (scope_id);
CREATE INDEX bindings_connection_idx ON bindings (connection_id) WHERE connection_id IS NOT NULL;

-- Defaults the platform wrote once: platform seed bindings (connection_id
-- NULL) and default-off tool overlays of a connection. A row here means
-- "already done"; the binding itself is the operator's from then on.
CREATE TABLE binding_defaults_applied (
    connection_id uuid REFERENCES mcp_connections(id) ON DELETE CASCADE,
    catalog_kind  text NOT NULL,
    catalog_id    text NOT NULL,
    applied_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX binding_defaults_applied_uq
    ON binding_defaults_applied (coalesce(connection_id, '00000000-0000-0000-0000-000000000000'::uuid), catalog_kind, catalog_id);

-- mcp_connections.owner_id has no foreign key (it points at one of three
-- tables); these triggers delete the logins of a deleted owner, which in turn
-- cascades their bindings, listed tools and credentials.
CREATE FUNCTION grants_delete_owned_connections() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM mcp_connections WHERE owner_scope = TG_ARGV[0] AND owner_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER organisations_delete_connections AFTER DELETE ON organisations
    FOR EACH ROW EXECUTE FUNCTION grants_delete_owned_connections('organisation');
CREATE TRIGGER guilds_delete_connections AFTER DELETE ON guilds
    FOR EACH ROW EXECUTE FUNCTION grants_delete_owned_connections('guild');
CREATE TRIGGER agents_delete_connections AFTER DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION grants_delete_owned_connections('agent');
CREATE INDEX mcp_connections_owner_idx ON mcp_connections (owner_id) WHERE owner_id IS NOT NULL;
