-- What the GitHub user who connected a login can reach in its installation,
-- read with that user's token at the connect (the token is not kept):
-- permission is write where the user can push, read otherwise. A login
-- works on these repositories only, and only until access_expires_at; then
-- it has to be connected again.
CREATE TABLE github_login_repositories (
    connection_id uuid NOT NULL REFERENCES github_logins(connection_id) ON DELETE CASCADE,
    github_id     bigint NOT NULL,
    full_name     text NOT NULL,
    permission    text NOT NULL CHECK (permission IN ('read', 'write')),
    PRIMARY KEY (connection_id, github_id)
);
ALTER TABLE github_logins
    ADD COLUMN access_checked_at timestamptz,
    ADD COLUMN access_expires_at timestamptz;

-- An installation already attached to one organisation is attached to
-- another only once an instance admin approved it (approved_at).
CREATE TABLE github_installation_approvals (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    installation_id bigint NOT NULL,
    account_login   text NOT NULL,
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    requested_at    timestamptz NOT NULL DEFAULT now(),
    approved_at     timestamptz,
    approved_by     uuid REFERENCES users(id) ON DELETE SET NULL,
    UNIQUE (installation_id, organisation_id)
);
