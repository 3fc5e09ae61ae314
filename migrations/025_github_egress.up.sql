-- A token the platform revoked at the end of its generation is not revoked
-- again; it stays for redaction until it would have expired.
ALTER TABLE github_issued_tokens ADD COLUMN revoked_at timestamptz;

-- A guild's choice about its coding agents' way to GitHub from sandboxes
-- without a network. No row: on (where the guild has repositories selected).
CREATE TABLE github_guild_settings (
    guild_id   uuid PRIMARY KEY REFERENCES guilds(id) ON DELETE CASCADE,
    egress     boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
