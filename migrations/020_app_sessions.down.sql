DROP TABLE IF EXISTS app_sessions;
