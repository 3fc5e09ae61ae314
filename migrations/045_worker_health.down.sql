DROP TABLE IF EXISTS worker_health;
