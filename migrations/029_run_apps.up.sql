-- MCP Apps (docs/adr/0620). A listed tool may declare the ui:// resource
-- that shows its results; the listing keeps that URI beside the tool.
ALTER TABLE mcp_tools ADD COLUMN ui_resource_uri text
    CHECK (ui_resource_uri IS NULL OR (ui_resource_uri LIKE 'ui://%' AND length(ui_resource_uri) <= 2048));

-- The app a run's tool call returned or declared, read once through the
-- call's login, redacted with the run's set, and kept beside the transcript
-- for the operator app: the model only reads a line naming it. (seq, idx):
-- the call's result message and the app's place among its apps, so a
-- retried call writes the same rows.
CREATE TABLE run_apps (
    run_id     uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq        integer NOT NULL CHECK (seq >= 1),
    idx        integer NOT NULL CHECK (idx >= 1),
    uri        text NOT NULL CHECK (uri LIKE 'ui://%' AND length(uri) <= 2048),
    media_type text NOT NULL CHECK (media_type LIKE 'text/html%'),
    html       text NOT NULL CHECK (octet_length(html) <= 262144),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq, idx)
);
