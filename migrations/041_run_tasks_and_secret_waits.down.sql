ALTER TABLE secret_requests DROP COLUMN wait_until;
DROP TABLE run_tasks;
