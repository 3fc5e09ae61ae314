-- Bounds on agents answering agents (issue 30, item 3; docs/adr/0802).
-- root_id: the message that started the exchange this one belongs to (NULL
-- when it starts one itself); runs per exchange are counted through it.
ALTER TABLE group_messages ADD COLUMN root_id uuid REFERENCES group_messages(id) ON DELETE SET NULL;
CREATE INDEX group_messages_root_idx ON group_messages (root_id) WHERE root_id IS NOT NULL;
CREATE INDEX group_messages_agent_rate_idx ON group_messages (guild_id, created_at) WHERE author_kind = 'agent';
CREATE INDEX group_messages_run_idx ON group_messages (run_id) WHERE run_id IS NOT NULL;

ALTER TABLE group_routes DROP CONSTRAINT group_routes_method_check;
ALTER TABLE group_routes ADD CONSTRAINT group_routes_method_check
    CHECK (method IN ('router', 'fallback', 'rule', 'hop_limit', 'run_budget', 'rate_limit'));

-- Where a schedule came from: the chat message the run that created it
-- answered, and that message's hop (NULL and 0: an operator or a direct run).
ALTER TABLE schedules ADD COLUMN origin_message_id uuid REFERENCES group_messages(id) ON DELETE SET NULL;
ALTER TABLE schedules ADD COLUMN origin_hop integer NOT NULL DEFAULT 0 CHECK (origin_hop >= 0);
