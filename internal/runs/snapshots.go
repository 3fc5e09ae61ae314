package runs

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/store"
)

// Flags are the agent flags a run was started with.
type Flags struct {
	Browser   bool `json:"browser"`
	Coding    bool `json:"coding"`
	Scripting bool `json:"scripting"`
	Memory    bool `json:"memory"`
}

// OfferedTool is one tool of a snapshot: what the model is shown and how a
// call is routed. It never holds a credential.
type OfferedTool struct {
	Name         string          `json:"name"`
	Kind         string          `json:"kind"` // "native" | "mcp"
	Description  string          `json:"description"`
	Schema       json.RawMessage `json:"schema"`        // validates the call's arguments
	ShapedSchema json.RawMessage `json:"shaped_schema"` // shown to the model
	Class        string          `json:"class"`
	Idempotent   bool            `json:"idempotent"`
	Quick        bool            `json:"quick,omitempty"` // a native tool on the fast path (local activity)
	ConnectionID string          `json:"connection_id,omitempty"`
	ServerSlug   string          `json:"server_slug,omitempty"`
	RemoteName   string          `json:"remote_name,omitempty"`
}

// Snapshot is what a run offers, fixed when it starts.
type Snapshot struct {
	ID       string        `json:"id"`
	RunID    string        `json:"run_id"`
	Flags    Flags         `json:"flags"`
	Tools    []OfferedTool `json:"tools"`
	Warnings []string      `json:"warnings"`
	// StatePrices is the prices section quoted at run start ("" when the
	// agent pins none); every turn of the run shows the same text.
	StatePrices string `json:"state_prices,omitempty"`
}

// Tool returns the offered tool named name.
func (s Snapshot) Tool(name string) (OfferedTool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return OfferedTool{}, false
}

// SaveSnapshot stores the run's snapshot once; a second call returns the
// first snapshot unchanged.
func SaveSnapshot(ctx context.Context, db store.DB, s Snapshot) (Snapshot, error) {
	flags, _ := json.Marshal(s.Flags)
	tools, _ := json.Marshal(s.Tools)
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	warnings, _ := json.Marshal(s.Warnings)
	_, err := db.Exec(ctx, `INSERT INTO run_snapshots (run_id, flags, tools, warnings, state_prices) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (run_id) DO NOTHING`, s.RunID, flags, tools, warnings, s.StatePrices)
	if err != nil {
		return Snapshot{}, store.Map(err)
	}
	return SnapshotOf(ctx, db, s.RunID)
}

// SnapshotOf returns the snapshot of a run.
func SnapshotOf(ctx context.Context, db store.DB, runID string) (Snapshot, error) {
	var s Snapshot
	var flags, tools, warnings []byte
	err := db.QueryRow(ctx, `SELECT id, run_id, flags, tools, warnings, state_prices FROM run_snapshots WHERE run_id = $1`, runID).
		Scan(&s.ID, &s.RunID, &flags, &tools, &warnings, &s.StatePrices)
	if err != nil {
		return Snapshot{}, store.Map(err)
	}
	if err := json.Unmarshal(flags, &s.Flags); err != nil {
		return Snapshot{}, err
	}
	if err := json.Unmarshal(tools, &s.Tools); err != nil {
		return Snapshot{}, err
	}
	if err := json.Unmarshal(warnings, &s.Warnings); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}
