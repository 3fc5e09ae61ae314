DROP VIEW IF EXISTS agent_chain_logins;
