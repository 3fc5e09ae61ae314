-- Budgets (issue 33): limits an operator sets on an organisation, a guild or
-- an agent. A NULL limit is no limit; 0 allows nothing. Days and months are
-- UTC.
CREATE TABLE budget_limits (
    scope              text NOT NULL CHECK (scope IN ('organisation', 'guild', 'agent')),
    scope_id           uuid NOT NULL,
    organisation_id    uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id           uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id           uuid REFERENCES agents(id) ON DELETE CASCADE,
    tool_calls_per_day integer CHECK (tool_calls_per_day >= 0),
    tokens_per_day     bigint CHECK (tokens_per_day >= 0),
    money_per_month    numeric(20, 6) CHECK (money_per_month >= 0),
    currency           text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, scope_id),
    CHECK ((scope = 'organisation' AND scope_id = organisation_id AND guild_id IS NULL AND agent_id IS NULL)
        OR (scope = 'guild' AND scope_id = guild_id AND agent_id IS NULL)
        OR (scope = 'agent' AND scope_id = agent_id AND guild_id IS NOT NULL))
);

-- Tool calls a day per scope are counted from the audit trail (one row per
-- call, written with its result); these partial indexes make the count an
-- index-only range scan.
CREATE INDEX audit_events_calls_org_at ON audit_events (organisation_id, at) INCLUDE (outcome) WHERE action = 'tool_call';
CREATE INDEX audit_events_calls_guild_at ON audit_events (guild_id, at) INCLUDE (outcome) WHERE action = 'tool_call';
CREATE INDEX audit_events_calls_agent_at ON audit_events (agent_id, at) INCLUDE (outcome) WHERE action = 'tool_call';

-- Why a run stopped before the model was done (a budget reached); '' for a
-- run that ended on its own.
ALTER TABLE runs ADD COLUMN stop_reason text NOT NULL DEFAULT '';
