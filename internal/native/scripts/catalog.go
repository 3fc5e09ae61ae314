package scripts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// Script is one of an agent's scripts as its catalog row holds it: an
// agent-level artifact of kind script whose content is the source and whose
// meta holds the description and the optional parameters schema.
type Script struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Source      string          `json:"source,omitempty"`
	Hash        string          `json:"hash"` // SHA-256 of the source, hex
	Size        int             `json:"size"` // bytes of source
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// Beginner opens a transaction: a pool, or a transaction (a savepoint).
type Beginner interface {
	store.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Hash is the hash a snapshot records of a source.
func Hash(source string) string {
	h := sha256.Sum256([]byte(source))
	return hex.EncodeToString(h[:])
}

const scriptCols = `key, coalesce(meta->>'description', ''), meta->'parameters', content,
	encode(sha256(convert_to(content, 'UTF8')), 'hex'), octet_length(content), created_at, updated_at`

func scanScript(row pgx.Row) (Script, error) {
	var s Script
	var params []byte
	err := row.Scan(&s.Name, &s.Description, &params, &s.Source, &s.Hash, &s.Size, &s.CreatedAt, &s.UpdatedAt)
	if len(params) > 0 && string(params) != "null" {
		s.Parameters = params
	}
	return s, err
}

// maxScripts is the agent's max_scripts.
func maxScripts(a orgs.Agent) int {
	if a.Config.MaxScripts > 0 {
		return a.Config.MaxScripts
	}
	return 0
}

// Create creates or replaces one of an agent's scripts (in must have passed
// Check) and reports whether it was created. A new name is refused when the
// agent already has max_scripts. after runs in the same transaction once the
// row is written; its error undoes the row, so a refused or failed create
// leaves nothing behind.
func Create(ctx context.Context, db Beginner, agent orgs.Agent, in Input, after func(tx pgx.Tx, s Script) error) (Script, bool, error) {
	var out Script
	var created bool
	tx, err := db.Begin(ctx)
	if err != nil {
		return out, false, store.Map(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The agent's row serialises concurrent creates, so the count holds.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM agents WHERE id = $1 FOR UPDATE`, agent.ID); err != nil {
		return out, false, store.Map(err)
	}
	var others int
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE key <> $2), bool_or(key = $2) IS TRUE FROM artifacts
		WHERE kind = 'script' AND owner_scope = 'agent' AND agent_id = $1`, agent.ID, in.Name).Scan(&others, &exists); err != nil {
		return out, false, store.Map(err)
	}
	if limit := maxScripts(agent); !exists && others >= limit {
		return out, false, artifacts.OnField("name", "this agent already has %d scripts, its max_scripts (%d): delete one with script_delete, or replace one by creating it again under its name",
			others, limit)
	}
	meta := map[string]any{"description": in.Description}
	if len(in.Parameters) > 0 {
		meta["parameters"] = in.Parameters
	}
	metaJSON, _ := json.Marshal(meta)
	out, err = scanScript(tx.QueryRow(ctx, `INSERT INTO artifacts (kind, owner_scope, organisation_id, agent_id, key, content, meta)
		VALUES ('script', 'agent', $1, $2, $3, $4, $5)
		ON CONFLICT (kind, owner_scope, owner_id, key)
		DO UPDATE SET content = EXCLUDED.content, meta = EXCLUDED.meta, updated_at = now()
		RETURNING `+scriptCols, agent.OrganisationID, agent.ID, in.Name, in.Source, metaJSON))
	if err != nil {
		return out, false, store.Map(err)
	}
	created = !exists
	if after != nil {
		if err := after(tx, out); err != nil {
			return Script{}, false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Script{}, false, store.Map(err)
	}
	return out, created, nil
}

// List returns an agent's scripts by name, without their source.
func List(ctx context.Context, db store.DB, agentID string) ([]Script, error) {
	rows, err := db.Query(ctx, `SELECT `+scriptCols+` FROM artifacts
		WHERE kind = 'script' AND owner_scope = 'agent' AND agent_id = $1 ORDER BY key`, agentID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Script{}
	for rows.Next() {
		s, err := scanScript(rows)
		if err != nil {
			return nil, err
		}
		s.Source = ""
		out = append(out, s)
	}
	return out, rows.Err()
}

// Get reads one script; a 404 *artifacts.Error when the agent has none by
// that name.
func Get(ctx context.Context, db store.DB, agentID, name string) (Script, error) {
	s, err := scanScript(db.QueryRow(ctx, `SELECT `+scriptCols+` FROM artifacts
		WHERE kind = 'script' AND owner_scope = 'agent' AND agent_id = $1 AND key = $2`, agentID, name))
	if errors.Is(store.Map(err), store.ErrNotFound) {
		return s, notFound(name)
	}
	return s, store.Map(err)
}

// Delete removes one script's row; a 404 *artifacts.Error when there is none.
// Runs that snapshotted it keep running it.
func Delete(ctx context.Context, db store.DB, agentID, name string) error {
	tag, err := db.Exec(ctx, `DELETE FROM artifacts
		WHERE kind = 'script' AND owner_scope = 'agent' AND agent_id = $1 AND key = $2`, agentID, name)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(name)
	}
	return nil
}

func notFound(name string) error {
	return artifacts.Errorf(http.StatusNotFound, "script %s not found", name)
}
