-- The logins an agent's runs can reach: those owned at the platform, by the
-- agent's organisation, by its guild and by the agent itself. One definition
-- for the run's redaction set and for refreshing tool lists at run start.
CREATE VIEW agent_chain_logins AS
SELECT a.id AS agent_id, c.id AS connection_id
FROM agents a
JOIN guilds g ON g.id = a.guild_id
JOIN mcp_connections c ON
     c.owner_scope = 'platform'
  OR (c.owner_scope = 'organisation' AND c.owner_id = g.organisation_id)
  OR (c.owner_scope = 'guild' AND c.owner_id = g.id)
  OR (c.owner_scope = 'agent' AND c.owner_id = a.id);
