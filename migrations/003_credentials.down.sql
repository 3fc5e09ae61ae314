DROP TABLE IF EXISTS connection_oauth_pending;
DROP TABLE IF EXISTS connection_credentials;
