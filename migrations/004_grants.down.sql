DROP INDEX IF EXISTS mcp_connections_owner_idx;
DROP TRIGGER IF EXISTS agents_delete_connections ON agents;
DROP TRIGGER IF EXISTS guilds_delete_connections ON guilds;
DROP TRIGGER IF EXISTS organisations_delete_connections ON organisations;
DROP FUNCTION IF EXISTS grants_delete_owned_connections();
DROP TABLE IF EXISTS binding_defaults_applied;
DROP TABLE IF EXISTS bindings;
DROP TABLE IF EXISTS mcp_tools;
DROP TABLE IF EXISTS mcp_catalog_tools;
