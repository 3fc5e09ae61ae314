-- A listed tool's overlay (mcp_tool binding) belongs to the login it was
-- written for: connection_id names that login, the row goes with it, and the
-- next login of the same server at the same scope starts from its own
-- defaults instead of inheriting a switch an operator set for another account.
-- An overlay with no login (written before any login resolved there) applies
-- to whichever login serves the scope.
ALTER TABLE bindings DROP CONSTRAINT bindings_check1;
ALTER TABLE bindings ADD CONSTRAINT bindings_connection_kind_check
    CHECK (connection_id IS NULL OR catalog_kind IN ('mcp', 'mcp_tool'));

DROP INDEX bindings_scope_item_uq;
CREATE UNIQUE INDEX bindings_scope_item_uq ON bindings (scope,
    coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), catalog_kind, catalog_id,
    coalesce(CASE WHEN catalog_kind = 'mcp_tool' THEN connection_id END, '00000000-0000-0000-0000-000000000000'::uuid));

-- Overlays the platform wrote as a login's defaults are that login's.
UPDATE bindings b SET connection_id = d.connection_id
FROM (SELECT DISTINCT ON (c.owner_scope, c.owner_id, a.catalog_id) a.connection_id, a.catalog_id, c.owner_scope, c.owner_id
      FROM binding_defaults_applied a JOIN mcp_connections c ON c.id = a.connection_id
      WHERE a.catalog_kind = 'mcp_tool'
      ORDER BY c.owner_scope, c.owner_id, a.catalog_id, a.applied_at DESC) d
WHERE b.catalog_kind = 'mcp_tool' AND b.connection_id IS NULL AND b.catalog_id = d.catalog_id
    AND b.scope = d.owner_scope AND b.scope_id IS NOT DISTINCT FROM d.owner_id::uuid;

-- Who started a run (a user id; '' for schedules, group chat and runs from
-- before this column), and so whom a secret request of that run asks: only
-- that user or an instance admin may answer it.
ALTER TABLE runs ADD COLUMN started_by text NOT NULL DEFAULT '';
ALTER TABLE secret_requests ADD COLUMN asked_of text NOT NULL DEFAULT '';
