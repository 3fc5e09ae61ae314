DROP TABLE run_apps;
ALTER TABLE mcp_tools DROP COLUMN ui_resource_uri;
