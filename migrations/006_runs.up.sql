-- Runs: an agent's turn with a model and its tools, driven by the Temporal
-- workflow "run". Postgres holds the transcript; the workflow history holds
-- only ids, model text and stamped tool results.
CREATE TABLE runs (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    agent_id        uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    guild_id        uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    trigger         text NOT NULL CHECK (trigger IN ('direct', 'group', 'schedule')),
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    model           text NOT NULL DEFAULT '',
    budget          integer NOT NULL CHECK (budget >= 0),
    remaining       integer NOT NULL CHECK (remaining >= 0),
    error           text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_agent_created_idx ON runs (agent_id, created_at DESC);

-- What a run offers, fixed at its start. tools holds names, kinds, schemas and
-- MCP routing (connection id, remote name); never a credential.
CREATE TABLE run_snapshots (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id     uuid NOT NULL UNIQUE REFERENCES runs(id) ON DELETE CASCADE,
    flags      jsonb NOT NULL DEFAULT '{}',
    tools      jsonb NOT NULL DEFAULT '[]',
    warnings   jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The conversation. seq is assigned by the workflow, so a retried activity
-- writes the same row again (ON CONFLICT DO NOTHING) instead of a new one.
CREATE TABLE messages (
    run_id       uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq          integer NOT NULL CHECK (seq >= 1),
    role         text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content      text NOT NULL DEFAULT '',
    tool_calls   jsonb,
    tool_call_id text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- One row per tool call, at the seq of its result message. arguments and
-- result are stamped (redacted, capped); the raw result is never stored.
CREATE TABLE tool_calls (
    run_id      uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq         integer NOT NULL CHECK (seq >= 1),
    call_id     text NOT NULL,
    tool_name   text NOT NULL,
    arguments   text NOT NULL DEFAULT '',
    result      text NOT NULL,
    outcome     text NOT NULL DEFAULT 'ok' CHECK (outcome IN ('ok', 'error', 'refused', 'interrupted')),
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    duration_ms integer NOT NULL DEFAULT 0,
    metadata    jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX tool_calls_tool_idx ON tool_calls (tool_name);

-- An organisation's own model provider keys, sealed by internal/secret with
-- the organisation id and provider as additional data.
CREATE TABLE organisation_model_keys (
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    provider        text NOT NULL CHECK (provider IN ('openrouter', 'deepinfra')),
    key_id          text NOT NULL,
    ciphertext      bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organisation_id, provider)
);
CREATE INDEX organisation_model_keys_key_id_idx ON organisation_model_keys (key_id);

-- Tooling problems agents file with report_issue, on their guild.
CREATE TABLE tooling_issues (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guild_id    uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id    uuid REFERENCES agents(id) ON DELETE SET NULL,
    run_id      uuid REFERENCES runs(id) ON DELETE SET NULL,
    kind        text NOT NULL CHECK (kind IN ('tool_failure', 'truncated', 'api', 'other')),
    summary     text NOT NULL,
    detail      text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by uuid REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX tooling_issues_guild_status_idx ON tooling_issues (guild_id, status, created_at DESC);
