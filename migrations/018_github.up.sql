-- The GitHub App (issue 19). Each connected github login's installation and
-- the repositories it selected; the install or authorize attempts waiting for
-- GitHub's callback; a guild's repositories (extra git URLs, and the
-- selection a guild-owned github login mirrors).

-- installation_id never leaves the orchestrator. selected is NULL until the
-- login picks repositories: [{github_id, name, full_name, url, default_branch}].
CREATE TABLE github_logins (
    connection_id   uuid PRIMARY KEY REFERENCES mcp_connections(id) ON DELETE CASCADE,
    installation_id bigint NOT NULL,
    account_login   text NOT NULL,
    selected        jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX github_logins_installation_idx ON github_logins (installation_id);

-- state_hash is the SHA-256 of the state GitHub carries back. installation_hint
-- is the id a setup redirect named (proves nothing until a user token reaches
-- it); choices are the installations the user's token reached when there were
-- several (the picker), [{installation_id, account}].
CREATE TABLE github_install_pending (
    state_hash        bytea PRIMARY KEY,
    connection_id     uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    redirect_uri      text NOT NULL,
    installation_hint bigint,
    choices           jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL
);
CREATE INDEX github_install_pending_connection_idx ON github_install_pending (connection_id);

-- connection_id is the github login a repository came through (NULL for an
-- extra git URL); deleting the login deletes its repositories. github_id is
-- GitHub's id, which survives a rename of the repository or its owner.
CREATE TABLE guild_repositories (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guild_id       uuid NOT NULL REFERENCES guilds(id) ON DELETE CASCADE,
    connection_id  uuid REFERENCES mcp_connections(id) ON DELETE CASCADE,
    github_id      bigint,
    name           text NOT NULL,
    url            text NOT NULL,
    default_branch text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (guild_id, url)
);
CREATE INDEX guild_repositories_connection_idx ON guild_repositories (connection_id);
