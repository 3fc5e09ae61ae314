-- A run's snapshot of its agent's scripts: the source, hash and parameters
-- each script had when the run started (or when this run created it), so a
-- script runs the same for the rest of the run whatever happens to its row.
-- script_delete removes the name from the run's snapshot. A row in
-- run_script_snapshots says the snapshot was taken.
CREATE TABLE run_script_snapshots (
    run_id   uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    taken_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE run_scripts (
    run_id      uuid NOT NULL REFERENCES run_script_snapshots(run_id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    source      text NOT NULL,
    hash        text NOT NULL,
    parameters  jsonb,
    PRIMARY KEY (run_id, name)
);
