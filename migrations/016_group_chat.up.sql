-- A guild's group chat: one ordered conversation of its operators and agents.
-- seq orders messages per guild; it is taken from group_chat_heads under a row
-- lock, so seq order is commit order and a follower reading "after seq N"
-- never misses a row that commits later with a smaller seq.
CREATE TABLE group_chat_heads (
    guild_id uuid PRIMARY KEY REFERENCES guilds(id) ON DELETE CASCADE,
    last_seq bigint NOT NULL DEFAULT 0
);

CREATE TABLE group_messages (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guild_id        uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    seq             bigint NOT NULL CHECK (seq >= 1),
    author_kind     text NOT NULL CHECK (author_kind IN ('user', 'agent')),
    author_user_id  uuid REFERENCES users(id) ON DELETE SET NULL,
    author_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
    author_name     text NOT NULL,
    content         text NOT NULL CHECK (content <> '' AND char_length(content) <= 8000),
    -- [{ "name": "bob", "agent_id": "…" | null }]: every @name in content
    mentions        jsonb NOT NULL DEFAULT '[]',
    -- the run that wrote an agent's message
    run_id          uuid REFERENCES runs(id) ON DELETE SET NULL,
    -- the message whose run wrote this one, and how many agent hops it is
    -- from the operator message that started the chain (0 for an operator)
    parent_id       uuid REFERENCES group_messages(id) ON DELETE SET NULL,
    hop             integer NOT NULL DEFAULT 0 CHECK (hop >= 0),
    -- a retried writer (a run's final answer, a group_post call) finds its row
    post_key        text UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (guild_id, seq),
    CHECK ((author_kind = 'user' AND author_agent_id IS NULL) OR
           (author_kind = 'agent' AND author_user_id IS NULL))
);

-- The agents that answer an operator message no @mention addresses (the
-- guild's designated responders, set through the chat API).
CREATE TABLE group_responders (
    guild_id   uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (guild_id, agent_id)
);

-- The routing decision of one message, written once by the route workflow.
CREATE TABLE group_routes (
    message_id  uuid PRIMARY KEY REFERENCES group_messages(id) ON DELETE CASCADE,
    method      text NOT NULL CHECK (method IN ('router', 'fallback', 'rule', 'hop_limit')),
    recipients  jsonb NOT NULL DEFAULT '[]',  -- [{ "agent_id", "name" }]
    history     integer NOT NULL DEFAULT 0 CHECK (history >= 0),
    note        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per recipient of a message: the run it was given. The key makes
-- starting that run idempotent.
CREATE TABLE group_deliveries (
    message_id uuid NOT NULL REFERENCES group_messages(id) ON DELETE CASCADE,
    agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    run_id     uuid REFERENCES runs(id) ON DELETE SET NULL,
    skipped    text NOT NULL DEFAULT '',  -- why no run was started, when none was
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, agent_id)
);
CREATE INDEX group_deliveries_run_idx ON group_deliveries (run_id);

-- Followers of a guild's chat are woken on guilds_group_chat (payload: the
-- guild id) when a message is written.
CREATE FUNCTION notify_group_chat() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('guilds_group_chat', NEW.guild_id::text);
    RETURN NULL;
END $$;

CREATE TRIGGER group_messages_notify AFTER INSERT ON group_messages
    FOR EACH ROW EXECUTE FUNCTION notify_group_chat();
