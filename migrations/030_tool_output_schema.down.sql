ALTER TABLE mcp_tools DROP COLUMN output_schema;
