DROP TABLE IF EXISTS github_installation_approvals;
ALTER TABLE github_logins DROP COLUMN IF EXISTS access_expires_at, DROP COLUMN IF EXISTS access_checked_at;
DROP TABLE IF EXISTS github_login_repositories;
