-- The output schema a tool listed, when it listed one: the pool checks the
-- tool's structuredContent against it (docs/adr/0621).
ALTER TABLE mcp_tools ADD COLUMN output_schema jsonb;
