-- How far the audit trail has been forwarded as OpenTelemetry log records:
-- one row, locked by the replica forwarding, so that events are sent once
-- per commit of the cursor (at least once across a crash).
CREATE TABLE audit_otel_cursor (
    id      integer PRIMARY KEY CHECK (id = 1),
    last_id bigint NOT NULL DEFAULT 0
);
INSERT INTO audit_otel_cursor (id, last_id) SELECT 1, coalesce(max(id), 0) FROM audit_events;
