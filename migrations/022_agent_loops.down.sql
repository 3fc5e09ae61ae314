ALTER TABLE schedules DROP COLUMN origin_hop;
ALTER TABLE schedules DROP COLUMN origin_message_id;
UPDATE group_routes SET method = 'hop_limit' WHERE method IN ('run_budget', 'rate_limit');
ALTER TABLE group_routes DROP CONSTRAINT group_routes_method_check;
ALTER TABLE group_routes ADD CONSTRAINT group_routes_method_check
    CHECK (method IN ('router', 'fallback', 'rule', 'hop_limit'));
DROP INDEX group_messages_run_idx;
DROP INDEX group_messages_agent_rate_idx;
DROP INDEX group_messages_root_idx;
ALTER TABLE group_messages DROP COLUMN root_id;
