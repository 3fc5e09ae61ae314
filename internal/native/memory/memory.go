// Package memory is the agent's memory: one Markdown text per agent, replaced
// whole by memory_write and shown in the run's prompt. Each replacement
// archives the previous text in memory_revisions, keeping the newest
// MaxRevisions.
package memory

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/store"
)

// MaxChars bounds the memory text, in characters.
const MaxChars = 12_000

// MaxRevisions is how many archived versions are kept per agent.
const MaxRevisions = 50

// Memory is an agent's current memory.
type Memory struct {
	AgentID   string     `json:"agent_id"`
	Content   string     `json:"content"`
	UpdatedAt *time.Time `json:"updated_at"` // nil when never written
}

// Revision is an archived version.
type Revision struct {
	ID         int64     `json:"id"`
	Content    string    `json:"content"`
	WrittenAt  time.Time `json:"written_at"`
	ArchivedAt time.Time `json:"archived_at"`
}

// Load returns the agent's memory text, "" when it has none.
func Load(ctx context.Context, db store.DB, agentID string) (string, error) {
	m, err := Get(ctx, db, agentID)
	return m.Content, err
}

// Get returns the agent's memory with its timestamp.
func Get(ctx context.Context, db store.DB, agentID string) (Memory, error) {
	m := Memory{AgentID: agentID}
	var at time.Time
	err := db.QueryRow(ctx, `SELECT content, updated_at FROM memory WHERE agent_id = $1`, agentID).Scan(&m.Content, &at)
	if err != nil {
		if errors.Is(store.Map(err), store.ErrNotFound) {
			return m, nil
		}
		return m, store.Map(err)
	}
	m.UpdatedAt = &at
	return m, nil
}

// Check refuses content longer than MaxChars or not UTF-8.
func Check(content string) error {
	if !utf8.ValidString(content) {
		return artifacts.OnField("content", "memory must be valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(content); n > MaxChars {
		return artifacts.OnField("content",
			"memory is %d characters; the whole memory may hold at most %d, so shorten it and write it again", n, MaxChars)
	}
	return nil
}

// Write replaces the agent's memory with content, archiving the previous
// version (when there was one) and dropping archives beyond MaxRevisions.
// Run it in a transaction so the archive and the replacement land together.
func Write(ctx context.Context, db store.DB, agentID, content string) (Memory, error) {
	if err := Check(content); err != nil {
		return Memory{}, err
	}
	// Lock the agent's row first so two writers archive one after the other.
	var exists bool
	if err := db.QueryRow(ctx, `SELECT true FROM agents WHERE id = $1 FOR UPDATE`, agentID).Scan(&exists); err != nil {
		return Memory{}, store.Map(err)
	}
	_, err := db.Exec(ctx, `INSERT INTO memory_revisions (agent_id, content, written_at)
		SELECT agent_id, content, updated_at FROM memory WHERE agent_id = $1`, agentID)
	if err != nil {
		return Memory{}, store.Map(err)
	}
	_, err = db.Exec(ctx, `DELETE FROM memory_revisions WHERE agent_id = $1 AND id NOT IN (
		SELECT id FROM memory_revisions WHERE agent_id = $1 ORDER BY id DESC LIMIT $2)`, agentID, MaxRevisions)
	if err != nil {
		return Memory{}, store.Map(err)
	}
	var at time.Time
	err = db.QueryRow(ctx, `INSERT INTO memory (agent_id, content) VALUES ($1, $2)
		ON CONFLICT (agent_id) DO UPDATE SET content = EXCLUDED.content, updated_at = clock_timestamp()
		RETURNING updated_at`, agentID, content).Scan(&at)
	if err != nil {
		return Memory{}, store.Map(err)
	}
	return Memory{AgentID: agentID, Content: content, UpdatedAt: &at}, nil
}

// Revisions lists the archived versions, newest first.
func Revisions(ctx context.Context, db store.DB, agentID string) ([]Revision, error) {
	rows, err := db.Query(ctx, `SELECT id, content, written_at, archived_at FROM memory_revisions
		WHERE agent_id = $1 ORDER BY id DESC`, agentID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Revision{}
	for rows.Next() {
		var r Revision
		if err := rows.Scan(&r.ID, &r.Content, &r.WrittenAt, &r.ArchivedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
