-- Model usage (issue 33): what each model turn of a run consumed, as the
-- provider reported it, and the price table the instance admin keeps. The
-- cost of a turn is fixed when the turn is stored, from the price in force
-- then; a later price change does not rewrite it.
CREATE TABLE model_prices (
    provider           text NOT NULL,
    model              text NOT NULL,
    input_per_million  numeric(20, 6) NOT NULL CHECK (input_per_million >= 0),
    output_per_million numeric(20, 6) NOT NULL CHECK (output_per_million >= 0),
    currency           text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, model)
);

-- One row per model turn, at the seq of the turn's assistant message, so a
-- retried turn writes nothing twice. cost is NULL when the model had no price.
CREATE TABLE model_turns (
    run_id            uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq               integer NOT NULL CHECK (seq >= 1),
    organisation_id   uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id          uuid NOT NULL,
    agent_id          uuid NOT NULL,
    provider          text NOT NULL,
    model             text NOT NULL,
    prompt_tokens     integer NOT NULL CHECK (prompt_tokens >= 0),
    completion_tokens integer NOT NULL CHECK (completion_tokens >= 0),
    cost              numeric(24, 12),
    currency          text NOT NULL DEFAULT '',
    at                timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);
-- Use against a budget: a range of one scope's turns since the start of a
-- day or month, read from the index alone.
CREATE INDEX model_turns_org_at ON model_turns (organisation_id, at) INCLUDE (prompt_tokens, completion_tokens, cost, currency);
CREATE INDEX model_turns_guild_at ON model_turns (guild_id, at) INCLUDE (prompt_tokens, completion_tokens, cost, currency);
CREATE INDEX model_turns_agent_at ON model_turns (agent_id, at) INCLUDE (prompt_tokens, completion_tokens, cost, currency);
