DROP TABLE audit_otel_cursor;
