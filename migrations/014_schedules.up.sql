-- An agent's schedules: cron expressions (a Temporal Schedule each) and daily
-- random windows (a workflow each). This table is the source of truth; the
-- worker reconciles Temporal with it.
CREATE TABLE schedules (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    agent_id        uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('cron', 'window')),
    cron            text NOT NULL DEFAULT '',
    timezone        text NOT NULL DEFAULT '',
    window_start    text NOT NULL DEFAULT '',  -- HH:MM local
    window_end      text NOT NULL DEFAULT '',  -- HH:MM local, HH:MM+1 on the next day
    max_wakes       integer NOT NULL DEFAULT 0,
    description     text NOT NULL CHECK (description <> '' AND char_length(description) <= 400),
    instruction     text NOT NULL CHECK (instruction <> '' AND char_length(instruction) <= 2000),
    paused          boolean NOT NULL DEFAULT false,
    next_run_at     timestamptz,
    last_run_at     timestamptz,
    last_run_id     uuid REFERENCES runs(id) ON DELETE SET NULL,
    created_by_run  uuid REFERENCES runs(id) ON DELETE SET NULL,
    created_by_user uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'cron' AND cron <> '') OR
           (kind = 'window' AND timezone <> '' AND window_start <> '' AND window_end <> '' AND max_wakes >= 1))
);
CREATE INDEX schedules_agent_id_idx ON schedules (agent_id, created_at);

-- One row per firing: the key is the Temporal workflow id of the firing, so
-- a retried activity finds the run it already created instead of a second.
CREATE TABLE schedule_firings (
    key         text PRIMARY KEY,
    schedule_id uuid NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    run_id      uuid REFERENCES runs(id) ON DELETE SET NULL,
    due_at      timestamptz NOT NULL,
    skipped     text NOT NULL DEFAULT '',  -- why no run was started, when none was
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_firings_schedule_idx ON schedule_firings (schedule_id, created_at);
