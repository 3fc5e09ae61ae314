DROP TABLE audit_events;
