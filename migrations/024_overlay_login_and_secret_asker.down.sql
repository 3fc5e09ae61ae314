ALTER TABLE secret_requests DROP COLUMN asked_of;
ALTER TABLE runs DROP COLUMN started_by;
DELETE FROM bindings a USING bindings b
WHERE a.catalog_kind = 'mcp_tool' AND b.catalog_kind = 'mcp_tool' AND a.scope = b.scope
    AND a.scope_id IS NOT DISTINCT FROM b.scope_id AND a.catalog_id = b.catalog_id AND a.id <> b.id
    AND (a.updated_at, a.id) < (b.updated_at, b.id);
UPDATE bindings SET connection_id = NULL WHERE catalog_kind = 'mcp_tool';
DROP INDEX bindings_scope_item_uq;
CREATE UNIQUE INDEX bindings_scope_item_uq
    ON bindings (scope, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), catalog_kind, catalog_id);
ALTER TABLE bindings DROP CONSTRAINT bindings_connection_kind_check;
ALTER TABLE bindings ADD CONSTRAINT bindings_check1 CHECK (connection_id IS NULL OR catalog_kind = 'mcp');
