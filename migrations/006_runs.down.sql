DROP TABLE IF EXISTS tooling_issues;
DROP TABLE IF EXISTS organisation_model_keys;
DROP TABLE IF EXISTS tool_calls;
DROP TABLE IF EXISTS messages;
DROP TABLE IF EXISTS run_snapshots;
DROP TABLE IF EXISTS runs;
