-- Input an MCP server asks of a person in the middle of a tool call (ADR
-- 0515): a form (elicitation/create, or an input request of an
-- input_required result) or a link to open (URL mode). One row per form; the
-- tool call's activity holds the call and waits for the answer, woken by
-- NOTIFY guilds_input_answers (payload: the row's id).
CREATE TABLE input_requests (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id          uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq             integer NOT NULL CHECK (seq >= 1),
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    tool            text NOT NULL,
    server          text NOT NULL DEFAULT '',
    mode            text NOT NULL CHECK (mode IN ('form', 'url')),
    message         text NOT NULL DEFAULT '',
    -- json, not jsonb: the schema is shown as it was received, its keys in
    -- their order.
    requested_schema json NOT NULL DEFAULT '{}',
    url             text NOT NULL DEFAULT '',
    -- Same call, same form: an activity retried after its worker died finds
    -- the request it asked before, and an answer given meanwhile is kept.
    form_digest     text NOT NULL,
    state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')),
    -- The accepted content, held only until the waiting call takes it.
    content         jsonb,
    answered_by     uuid REFERENCES users(id) ON DELETE SET NULL,
    answered_by_name text NOT NULL DEFAULT '',
    expires_at      timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    answered_at     timestamptz,
    delivered_at    timestamptz,
    CHECK ((state = 'pending') = (answered_at IS NULL)),
    CHECK (content IS NULL OR state = 'accepted')
);
CREATE UNIQUE INDEX input_requests_pending_uq ON input_requests (run_id, seq, form_digest) WHERE state = 'pending';
CREATE INDEX input_requests_inbox ON input_requests (organisation_id, state, created_at DESC);
CREATE INDEX input_requests_run ON input_requests (run_id);
