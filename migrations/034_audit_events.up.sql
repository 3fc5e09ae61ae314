-- The audit trail (issue 33): one row per tool call, written in the call's
-- result transaction, and one per change an operator or the platform makes
-- to a login, a binding or a secret. Rows outlive their run, agent and guild
-- (no foreign keys but the organisation's): they say what happened, not
-- what exists. Never arguments: their digest only.
CREATE TABLE audit_events (
    id              bigserial PRIMARY KEY,
    at              timestamptz NOT NULL DEFAULT now(),
    organisation_id uuid REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid,
    agent_id        uuid,
    run_id          uuid,
    seq             integer,
    trigger         text NOT NULL DEFAULT '',
    action          text NOT NULL CHECK (action IN ('tool_call', 'connect', 'disconnect', 'refresh_failed',
                        'binding', 'secret_read', 'secret_grant', 'approval')),
    tool            text NOT NULL DEFAULT '',
    kind            text NOT NULL DEFAULT '',
    connection_id   uuid,
    login_scope     text NOT NULL DEFAULT '',
    account_hint    text NOT NULL DEFAULT '',
    args_digest     text NOT NULL DEFAULT '',
    outcome         text NOT NULL DEFAULT '',
    duration_ms     integer NOT NULL DEFAULT 0,
    result_bytes    integer NOT NULL DEFAULT 0,
    approval_id     uuid,
    actor           text NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_org_at ON audit_events (organisation_id, at DESC, id DESC);
CREATE INDEX audit_events_at ON audit_events (at DESC, id DESC);
CREATE UNIQUE INDEX audit_events_tool_call ON audit_events (run_id, seq) WHERE action = 'tool_call';
