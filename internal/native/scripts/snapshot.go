package scripts

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Entry is one script as a run holds it: what script_run executes for the
// rest of the run, whatever happens to the catalog row.
type Entry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Source      string          `json:"source"`
	Hash        string          `json:"hash"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// TakeSnapshot records the agent's scripts as the run's snapshot, once: a
// later call for the same run changes nothing. The run activity takes it
// when the run starts; a script tool takes it on its first call otherwise.
func TakeSnapshot(ctx context.Context, db Beginner, runID, agentID string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return store.Map(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	tag, err := tx.Exec(ctx, `INSERT INTO run_script_snapshots (run_id) VALUES ($1) ON CONFLICT DO NOTHING`, runID)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return nil // taken already
	}
	if _, err := tx.Exec(ctx, `INSERT INTO run_scripts (run_id, name, description, source, hash, parameters)
		SELECT $1, key, coalesce(meta->>'description', ''), content, encode(sha256(convert_to(content, 'UTF8')), 'hex'),
		       nullif(meta->'parameters', 'null'::jsonb)
		FROM artifacts WHERE kind = 'script' AND owner_scope = 'agent' AND agent_id = $2`, runID, agentID); err != nil {
		return store.Map(err)
	}
	return store.Map(tx.Commit(ctx))
}

const entryCols = `name, description, source, hash, parameters`

func scanEntry(row pgx.Row) (Entry, error) {
	var e Entry
	var params []byte
	err := row.Scan(&e.Name, &e.Description, &e.Source, &e.Hash, &params)
	if len(params) > 0 && string(params) != "null" {
		e.Parameters = params
	}
	return e, err
}

// RunEntries lists the scripts of a run's snapshot by name.
func RunEntries(ctx context.Context, db store.DB, runID string) ([]Entry, error) {
	rows, err := db.Query(ctx, `SELECT `+entryCols+` FROM run_scripts WHERE run_id = $1 ORDER BY name`, runID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// RunEntry returns one script of a run's snapshot; ok is false when the
// run holds none by that name.
func RunEntry(ctx context.Context, db store.DB, runID, name string) (e Entry, ok bool, err error) {
	e, err = scanEntry(db.QueryRow(ctx, `SELECT `+entryCols+` FROM run_scripts WHERE run_id = $1 AND name = $2`, runID, name))
	switch err = store.Map(err); {
	case err == store.ErrNotFound:
		return e, false, nil
	case err != nil:
		return e, false, err
	}
	return e, true, nil
}

// putEntry records a script this run created or replaced in its snapshot.
func putEntry(ctx context.Context, db store.DB, runID string, s Script) error {
	var params any
	if len(s.Parameters) > 0 {
		params = s.Parameters
	}
	_, err := db.Exec(ctx, `INSERT INTO run_scripts (run_id, name, description, source, hash, parameters)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (run_id, name) DO UPDATE SET description = EXCLUDED.description, source = EXCLUDED.source,
		hash = EXCLUDED.hash, parameters = EXCLUDED.parameters`, runID, s.Name, s.Description, s.Source, s.Hash, params)
	return store.Map(err)
}

// dropEntry removes a name from a run's snapshot and reports whether it was there.
func dropEntry(ctx context.Context, db store.DB, runID, name string) (bool, error) {
	tag, err := db.Exec(ctx, `DELETE FROM run_scripts WHERE run_id = $1 AND name = $2`, runID, name)
	if err != nil {
		return false, store.Map(err)
	}
	return tag.RowsAffected() > 0, nil
}

// KindScript is the snapshot kind of a script offered as a tool of its own.
const KindScript = "script"

// OfferedTools are the scripts of a run's snapshot that declare parameters,
// as tools of their own (kind script; a call runs the script through
// script_run with the call's arguments). A script whose name another
// offered tool already takes, or whose schema cannot be offered, is left
// out with a warning.
func OfferedTools(ctx context.Context, db store.DB, runID string, taken map[string]bool) ([]runs.OfferedTool, []string, error) {
	entries, err := RunEntries(ctx, db, runID)
	if err != nil {
		return nil, nil, err
	}
	var out []runs.OfferedTool
	var warnings []string
	for _, e := range entries {
		if len(e.Parameters) == 0 {
			continue
		}
		if taken[e.Name] {
			warnings = append(warnings, fmt.Sprintf("script %s is not offered as a tool: another tool of this run has that name; run it with script_run", e.Name))
			continue
		}
		shaped, _, err := tools.Shape(e.Parameters)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("script %s is not offered as a tool: its parameters schema cannot be offered (%v)", e.Name, err))
			continue
		}
		out = append(out, runs.OfferedTool{Name: e.Name, Kind: KindScript, RemoteName: e.Name,
			Description: e.Description + " (your script " + e.Name + "; the arguments reach its stdin as JSON)",
			Schema:      e.Parameters, ShapedSchema: shaped, Class: string(RunClass)})
	}
	return out, warnings, nil
}
