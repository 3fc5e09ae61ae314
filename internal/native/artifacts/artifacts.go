// Package artifacts is the store of an agent's files: Markdown notes today,
// scripts later. An artifact has a kind, an owner (an agent, a guild or the
// organisation) and a key unique for that owner and kind.
package artifacts

import (
	"context"
	"errors"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Kind is what an artifact holds.
type Kind string

// Kinds of artifact.
const (
	KindNote   Kind = "note"
	KindScript Kind = "script"
)

// Scope is the level that owns an artifact.
type Scope string

// Scopes, from the narrowest.
const (
	ScopeAgent Scope = "agent"
	ScopeGuild Scope = "guild"
	ScopeOrg   Scope = "org"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeAgent || s == ScopeGuild || s == ScopeOrg }

// Owner names one owner: the scope and the id of the agent, guild or
// organisation. OrgID is always set (every owner lives in an organisation).
type Owner struct {
	Scope Scope
	ID    string
	OrgID string
}

// Artifact is one stored file.
type Artifact struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Scope     Scope     `json:"level"`
	OwnerID   string    `json:"owner_id"`
	Key       string    `json:"key"`
	Content   string    `json:"content"`
	Size      int       `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

const cols = `id, kind, owner_scope, owner_id, key, content, octet_length(content), created_at, updated_at`

func scan(row interface{ Scan(...any) error }) (Artifact, error) {
	var a Artifact
	err := row.Scan(&a.ID, &a.Kind, &a.Scope, &a.OwnerID, &a.Key, &a.Content, &a.Size, &a.CreatedAt, &a.UpdatedAt)
	return a, err
}

// ownerArgs returns the organisation, guild and agent columns of an owner.
func ownerArgs(o Owner) (org string, guild, agent *string) {
	id := o.ID
	switch o.Scope {
	case ScopeGuild:
		guild = &id
	case ScopeAgent:
		agent = &id
	}
	return o.OrgID, guild, agent
}

var errOwner = errors.New("artifacts: owner needs a valid scope, an id and an organisation")

func (o Owner) check() error {
	if !o.Scope.Valid() || o.ID == "" || o.OrgID == "" {
		return errOwner
	}
	return nil
}

// Put creates or replaces the artifact at (kind, owner, key) and reports
// whether it was created.
func Put(ctx context.Context, db store.DB, kind Kind, o Owner, key, content string) (Artifact, bool, error) {
	if err := o.check(); err != nil {
		return Artifact{}, false, err
	}
	org, guild, agent := ownerArgs(o)
	var created bool
	var a Artifact
	err := db.QueryRow(ctx, `INSERT INTO artifacts (kind, owner_scope, organisation_id, guild_id, agent_id, key, content)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (kind, owner_scope, owner_id, key)
		DO UPDATE SET content = EXCLUDED.content, updated_at = now()
		RETURNING `+cols+`, (xmax = 0)`, kind, o.Scope, org, guild, agent, key, content).
		Scan(&a.ID, &a.Kind, &a.Scope, &a.OwnerID, &a.Key, &a.Content, &a.Size, &a.CreatedAt, &a.UpdatedAt, &created)
	return a, created, store.Map(err)
}

// Get reads one artifact; store.ErrNotFound when it does not exist.
func Get(ctx context.Context, db store.DB, kind Kind, o Owner, key string) (Artifact, error) {
	a, err := scan(db.QueryRow(ctx, `SELECT `+cols+` FROM artifacts
		WHERE kind = $1 AND owner_scope = $2 AND owner_id = $3 AND key = $4`, kind, o.Scope, o.ID, key))
	return a, store.Map(err)
}

// Delete removes one artifact; store.ErrNotFound when it does not exist.
func Delete(ctx context.Context, db store.DB, kind Kind, o Owner, key string) error {
	tag, err := db.Exec(ctx, `DELETE FROM artifacts
		WHERE kind = $1 AND owner_scope = $2 AND owner_id = $3 AND key = $4`, kind, o.Scope, o.ID, key)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Filter narrows List.
type Filter struct {
	// Words must all appear (case-insensitive substring) in the key or the content.
	Words []string
	Limit int // 0 means 100
}

// List returns the artifacts of kind held by any of owners, newest change
// first, optionally narrowed by words. Contents are included.
func List(ctx context.Context, db store.DB, kind Kind, owners []Owner, f Filter) ([]Artifact, error) {
	if len(owners) == 0 {
		return []Artifact{}, nil
	}
	scopes := make([]string, len(owners))
	ids := make([]string, len(owners))
	for i, o := range owners {
		scopes[i], ids[i] = string(o.Scope), o.ID
	}
	patterns := make([]string, len(f.Words))
	for i, w := range f.Words {
		patterns[i] = "%" + EscapeLike(w) + "%"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.Query(ctx, `SELECT `+cols+` FROM artifacts
		WHERE kind = $1
		  AND (owner_scope, owner_id) IN (SELECT * FROM unnest($2::text[], $3::uuid[]))
		  AND (key || ' ' || content) ILIKE ALL ($4::text[])
		ORDER BY updated_at DESC, key LIMIT $5`, kind, scopes, ids, patterns, limit)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Artifact{}
	for rows.Next() {
		a, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// EscapeLike escapes the LIKE wildcards of s so it matches literally.
func EscapeLike(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '%', '_':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
