DROP TABLE IF EXISTS mcp_connections;
DROP TABLE IF EXISTS mcp_servers;
