-- One row per worker process: what its sandbox engine answered when last
-- asked. The API process cannot reach the worker's engine, so the Tools view
-- reads this to say whether code tools can run (issue 34).
CREATE TABLE worker_health (
    worker_id      text PRIMARY KEY,
    hostname       text NOT NULL DEFAULT '',
    sandbox_driver text NOT NULL,
    engine_ok      boolean NOT NULL,
    engine_error   text NOT NULL DEFAULT '',
    reported_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX worker_health_reported_at ON worker_health (reported_at DESC);
