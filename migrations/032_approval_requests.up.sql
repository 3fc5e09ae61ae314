-- A call that waits for a person (ADR 0514). One row per asking: the
-- binding the approval is for (run, seq, agent, tool, login, argument digest,
-- policy version, expiry), the arguments as the operator sees them (redacted
-- with the run's set before they are written), and the decision.
CREATE TABLE approval_requests (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id          uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq             integer NOT NULL CHECK (seq >= 1),
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    tool            text NOT NULL,
    -- The connection that would serve the call, '' for none. Not a foreign
    -- key: a login deleted while the request waits must not turn the
    -- request into one for "no login".
    login_id        text NOT NULL DEFAULT '',
    args_digest     text NOT NULL CHECK (args_digest LIKE 'sha256:%'),
    arguments       jsonb NOT NULL,
    policy_version  text NOT NULL,
    asked_because   text NOT NULL DEFAULT '',
    state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'used')),
    stop_asking     boolean NOT NULL DEFAULT false,
    decided_by      uuid REFERENCES users(id) ON DELETE SET NULL,
    decided_by_name text NOT NULL DEFAULT '',
    reason          text NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
    expires_at      timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    decided_at      timestamptz,
    used_at         timestamptz,
    -- The workflow's retried "ask" writes the same row; the same call asked
    -- again under another policy or with other arguments is a new row.
    UNIQUE (run_id, seq, args_digest, policy_version),
    CHECK ((state = 'pending') = (decided_at IS NULL))
);
CREATE INDEX approval_requests_inbox ON approval_requests (organisation_id, state, created_at DESC);

-- A run waiting for a person reads 'waiting'; a call a person refused, or
-- that waited past its expiry, is 'denied'.
ALTER TABLE runs DROP CONSTRAINT runs_status_check,
    ADD CONSTRAINT runs_status_check
    CHECK (status IN ('queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'));
ALTER TABLE tool_calls DROP CONSTRAINT tool_calls_outcome_check,
    ADD CONSTRAINT tool_calls_outcome_check
    CHECK (outcome IN ('ok', 'error', 'refused', 'interrupted', 'denied'));

-- Which tools ask (ADR 0514): the third switch state, kept beside the
-- bindings and resolved by the same walk, narrowest scope first. ask=false
-- at a narrower scope says "do not ask here" under a wider Ask. tool is the
-- name the model sees (a native tool's name, an MCP tool's prefixed name).
CREATE TABLE approval_policies (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    scope           text NOT NULL CHECK (scope IN ('platform', 'organisation', 'guild', 'agent')),
    organisation_id uuid REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid REFERENCES agents(id) ON DELETE CASCADE,
    scope_id        uuid GENERATED ALWAYS AS (coalesce(agent_id, guild_id, organisation_id)) STORED,
    tool            text NOT NULL CHECK (tool <> ''),
    ask             boolean NOT NULL,
    rules           jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rules) = 'array'),
    wait_seconds    integer NOT NULL DEFAULT 86400 CHECK (wait_seconds BETWEEN 60 AND 2592000),
    updated_by      text NOT NULL DEFAULT '',
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (CASE scope
        WHEN 'platform' THEN organisation_id IS NULL AND guild_id IS NULL AND agent_id IS NULL
        WHEN 'organisation' THEN organisation_id IS NOT NULL AND guild_id IS NULL AND agent_id IS NULL
        WHEN 'guild' THEN guild_id IS NOT NULL AND organisation_id IS NULL AND agent_id IS NULL
        ELSE agent_id IS NOT NULL AND organisation_id IS NULL AND guild_id IS NULL END)
);
CREATE UNIQUE INDEX approval_policies_scope_tool_uq
    ON approval_policies (scope, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), tool);
