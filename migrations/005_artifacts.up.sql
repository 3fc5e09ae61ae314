-- Trigram indexes back substring and similar-spelling matches on records and notes.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One store for the agent's files: Markdown notes now, scripts later (kind).
-- Exactly one owner column is set, matching owner_scope; owner_id folds them
-- into one value so a key is unique per owner.
CREATE TABLE artifacts (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind            text NOT NULL CHECK (kind IN ('note', 'script')),
    owner_scope     text NOT NULL CHECK (owner_scope IN ('agent', 'guild', 'org')),
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id        uuid REFERENCES agents(id) ON DELETE CASCADE,
    owner_id        uuid GENERATED ALWAYS AS (coalesce(agent_id, guild_id, organisation_id)) STORED,
    key             text NOT NULL CHECK (key <> ''),
    content         text NOT NULL DEFAULT '',
    meta            jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (
        (owner_scope = 'org' AND guild_id IS NULL AND agent_id IS NULL) OR
        (owner_scope = 'guild' AND guild_id IS NOT NULL AND agent_id IS NULL) OR
        (owner_scope = 'agent' AND agent_id IS NOT NULL AND guild_id IS NULL)
    )
);
CREATE UNIQUE INDEX artifacts_owner_key_uq ON artifacts (kind, owner_scope, owner_id, key);
CREATE INDEX artifacts_org_idx ON artifacts (organisation_id, kind);
CREATE INDEX artifacts_content_trgm_idx ON artifacts USING gin ((key || ' ' || content) gin_trgm_ops);

-- The agent's memory: one row, replaced whole; earlier versions are archived.
CREATE TABLE memory (
    agent_id   uuid PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    content    text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memory_revisions (
    id          bigserial PRIMARY KEY,
    agent_id    uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    content     text NOT NULL,
    written_at  timestamptz NOT NULL,
    archived_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_revisions_agent_idx ON memory_revisions (agent_id, id DESC);

-- Operator-defined typed tables. guild_id NULL: an organisation table; else
-- the table belongs to that guild. columns is the declared column list (JSON).
CREATE TABLE collections (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organisation_id uuid NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    guild_id        uuid REFERENCES guilds(id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
    description     text NOT NULL DEFAULT '',
    columns         jsonb NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organisation_id, name)
);

-- Who may read or write a collection. An agent row overrides everything else
-- for that agent ('none' keeps it out); a guild row applies to its members.
CREATE TABLE collection_grants (
    collection_id uuid NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    guild_id      uuid REFERENCES guilds(id) ON DELETE CASCADE,
    agent_id      uuid REFERENCES agents(id) ON DELETE CASCADE,
    subject_id    uuid GENERATED ALWAYS AS (coalesce(agent_id, guild_id)) STORED,
    access        text NOT NULL CHECK (access IN ('none', 'read', 'write')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((guild_id IS NULL) <> (agent_id IS NULL)),
    PRIMARY KEY (collection_id, subject_id)
);
CREATE INDEX collection_grants_guild_idx ON collection_grants (guild_id);
CREATE INDEX collection_grants_agent_idx ON collection_grants (agent_id);

-- Records keep their values as jsonb. search_text (every value, one per line)
-- is written with the record; its trigram index serves substring matches and
-- search_tsv serves the websearch grammar. unique_key holds the normalised
-- value of the collection's unique column, if any.
CREATE TABLE records (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection_id uuid NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    data          jsonb NOT NULL DEFAULT '{}',
    search_text   text NOT NULL DEFAULT '',
    search_tsv    tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_text)) STORED,
    unique_key    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    deleted_at    timestamptz
);
CREATE INDEX records_live_idx ON records (collection_id, updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX records_tsv_idx ON records USING gin (search_tsv) WHERE deleted_at IS NULL;
CREATE INDEX records_text_trgm_idx ON records USING gin (search_text gin_trgm_ops) WHERE deleted_at IS NULL;
CREATE INDEX records_data_idx ON records USING gin (data jsonb_path_ops) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX records_unique_uq ON records (collection_id, unique_key)
    WHERE deleted_at IS NULL AND unique_key IS NOT NULL;
