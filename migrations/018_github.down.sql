DROP TABLE IF EXISTS guild_repositories;
DROP TABLE IF EXISTS github_install_pending;
DROP TABLE IF EXISTS github_logins;
