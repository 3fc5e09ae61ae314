DROP TABLE IF EXISTS secret_requests;
DROP TABLE IF EXISTS secret_call_arguments;
DROP TABLE IF EXISTS agent_secret_audit;
DROP TABLE IF EXISTS agent_secret_grants;
DROP TABLE IF EXISTS agent_secrets;
