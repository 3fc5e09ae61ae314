-- A tool call whose server answered input_required, waiting durably for a
-- person (ADR 0515): the server's input request keys, each with the
-- input_requests row that asks it, and the server's requestState, sealed with
-- the platform keyring (it is opaque and may carry what the server would
-- rather not show). The row lives from the suspension until the server has
-- the answers; nothing of it enters the workflow history.
CREATE TABLE input_holds (
    run_id     uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq        integer NOT NULL CHECK (seq >= 1),
    -- {"<the server's key>": "<input_requests.id>", ...}
    requests   jsonb NOT NULL,
    -- The sealed requestState; NULL when the server sent none.
    state      bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);
