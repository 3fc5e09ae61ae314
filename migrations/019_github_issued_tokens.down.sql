DROP TABLE IF EXISTS github_issued_tokens;
