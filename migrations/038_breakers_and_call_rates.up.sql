-- Issue 33 items 5 and 7. login_breakers (internal/breaker) is the circuit
-- breaker of each login: failures in a row, and while paused, until when and
-- for how long the next pause lasts. A row exists only for a login that has
-- failed since its last success; the login's delete removes it.
CREATE TABLE login_breakers (
    connection_id uuid PRIMARY KEY REFERENCES mcp_connections(id) ON DELETE CASCADE,
    failures      integer NOT NULL CHECK (failures >= 0),
    paused_until  timestamptz,            -- NULL: calls go through
    cool_off_ms   bigint NOT NULL DEFAULT 0 CHECK (cool_off_ms >= 0),
    trial_at      timestamptz,            -- the one trial call after a pause started then
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- organisation_call_rates (internal/callrate) is the rate of tool calls an
-- organisation's runs may make; no row (or 0) is no limit.
CREATE TABLE organisation_call_rates (
    organisation_id  uuid PRIMARY KEY REFERENCES organisations(id) ON DELETE CASCADE,
    calls_per_minute integer NOT NULL CHECK (calls_per_minute >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
