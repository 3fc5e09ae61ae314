-- What the platform measures about a run, beside its status: metadata.exploration
-- on coding runs (calls_before_first_edit, read_bytes_unedited), rewritten
-- after each generation.
ALTER TABLE runs ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
