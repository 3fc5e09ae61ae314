-- Budgets (issue 33, ADR 0521): a daily roll-up of use, so that checking a
-- limit reads a few rows whatever the day's calls. budget_use is owned by
-- internal/budgets. It holds rows only for scopes that have a budget_limits
-- row: triggers on audit_events and model_turns add to it in the
-- transaction that stores the call or the turn, and budgets.Set rebuilds a
-- scope's rows from those tables when it sets limits.
--
-- Calls are counted in the row of currency ''; a turn's tokens and cost in
-- the row of the turn's currency ('' when unpriced). Days are UTC.
CREATE TABLE budget_use (
    scope      text NOT NULL CHECK (scope IN ('organisation', 'guild', 'agent')),
    scope_id   uuid NOT NULL,
    day        date NOT NULL,
    currency   text NOT NULL DEFAULT '',
    tool_calls bigint NOT NULL DEFAULT 0,
    tokens     bigint NOT NULL DEFAULT 0,
    cost       numeric(24, 12) NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, scope_id, day, currency)
);

-- budget_use_add adds to the rows of day of whichever of the three scopes
-- has limits. The organisation's shared advisory lock, held to the end of
-- the transaction, lets budgets.Set (which takes it exclusively) rebuild the
-- rows of a scope of that organisation knowing that no call or turn is half
-- counted. One lock per organisation, not per scope: a statement that
-- stores or deletes many rows (a prune) holds one lock per organisation.
CREATE FUNCTION budget_use_add(o uuid, g uuid, a uuid, d date, cur text, calls bigint, toks bigint, money numeric)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF o IS NULL THEN -- not an organisation's: no limit applies
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(516, hashtext(o::text));
    IF NOT EXISTS (SELECT 1 FROM budget_limits l WHERE (l.scope = 'organisation' AND l.scope_id = o)
            OR (l.scope = 'guild' AND l.scope_id = g) OR (l.scope = 'agent' AND l.scope_id = a)) THEN
        RETURN; -- the common case, no limits: no write
    END IF;
    INSERT INTO budget_use AS u (scope, scope_id, day, currency, tool_calls, tokens, cost)
    SELECT l.scope, l.scope_id, d, cur, calls, toks, money
    FROM budget_limits l
    WHERE (l.scope = 'organisation' AND l.scope_id = o) OR (l.scope = 'guild' AND l.scope_id = g)
        OR (l.scope = 'agent' AND l.scope_id = a)
    ORDER BY CASE l.scope WHEN 'organisation' THEN 0 WHEN 'guild' THEN 1 ELSE 2 END
    ON CONFLICT (scope, scope_id, day, currency) DO UPDATE SET tool_calls = u.tool_calls + EXCLUDED.tool_calls,
        tokens = u.tokens + EXCLUDED.tokens, cost = u.cost + EXCLUDED.cost;
END $$;

-- A call counts when it ran or may have (budgets.countedCall).
CREATE FUNCTION budget_use_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM budget_use_add(NEW.organisation_id, NEW.guild_id, NEW.agent_id, (NEW.at AT TIME ZONE 'UTC')::date, '', 1, 0, 0);
    ELSE
        PERFORM budget_use_add(OLD.organisation_id, OLD.guild_id, OLD.agent_id, (OLD.at AT TIME ZONE 'UTC')::date, '', -1, 0, 0);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER audit_events_budget_use_insert AFTER INSERT ON audit_events FOR EACH ROW
    WHEN (NEW.action = 'tool_call' AND NEW.outcome NOT IN ('refused', 'denied')) EXECUTE FUNCTION budget_use_call();
CREATE TRIGGER audit_events_budget_use_delete AFTER DELETE ON audit_events FOR EACH ROW
    WHEN (OLD.action = 'tool_call' AND OLD.outcome NOT IN ('refused', 'denied')) EXECUTE FUNCTION budget_use_call();

CREATE FUNCTION budget_use_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM budget_use_add(NEW.organisation_id, NEW.guild_id, NEW.agent_id, (NEW.at AT TIME ZONE 'UTC')::date,
            NEW.currency, 0, NEW.prompt_tokens + NEW.completion_tokens, coalesce(NEW.cost, 0));
    ELSE
        PERFORM budget_use_add(OLD.organisation_id, OLD.guild_id, OLD.agent_id, (OLD.at AT TIME ZONE 'UTC')::date,
            OLD.currency, 0, -(OLD.prompt_tokens + OLD.completion_tokens), -coalesce(OLD.cost, 0));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER model_turns_budget_use AFTER INSERT OR DELETE ON model_turns FOR EACH ROW
    EXECUTE FUNCTION budget_use_turn();

-- A scope whose limits go (removed, or its organisation, guild or agent
-- deleted) keeps no use rows; setting limits again rebuilds them.
CREATE FUNCTION budget_use_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM budget_use WHERE scope = OLD.scope AND scope_id = OLD.scope_id;
    RETURN NULL;
END $$;
CREATE TRIGGER budget_limits_forget_use AFTER DELETE ON budget_limits FOR EACH ROW
    EXECUTE FUNCTION budget_use_forget();
