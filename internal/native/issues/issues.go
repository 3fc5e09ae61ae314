// Package issues is the report_issue tool and the guild inbox of tooling
// problems it fills: agents file, operators list and resolve.
package issues

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Kinds of tooling problems.
var Kinds = []string{"tool_failure", "truncated", "api", "other"}

// Limits on what an agent may file.
const (
	MaxSummary = 300
	MaxDetail  = 8000
)

// Issue is one filed tooling problem.
type Issue struct {
	ID         string     `json:"id"`
	GuildID    string     `json:"guild_id"`
	AgentID    *string    `json:"agent_id"`
	RunID      *string    `json:"run_id"`
	Kind       string     `json:"kind"`
	Summary    string     `json:"summary"`
	Detail     string     `json:"detail"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	ResolvedBy *string    `json:"resolved_by,omitempty"`
}

// New is what an agent files.
type New struct {
	GuildID string
	AgentID string // "" when not filed from a run
	RunID   string
	Kind    string
	Summary string
	Detail  string
}

func validKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

const cols = `id, guild_id, agent_id, run_id, kind, summary, detail, status, created_at, resolved_at, resolved_by`

func scan(row interface{ Scan(...any) error }) (Issue, error) {
	var i Issue
	err := row.Scan(&i.ID, &i.GuildID, &i.AgentID, &i.RunID, &i.Kind, &i.Summary, &i.Detail, &i.Status,
		&i.CreatedAt, &i.ResolvedAt, &i.ResolvedBy)
	return i, store.Map(err)
}

// File stores a new open issue.
func File(ctx context.Context, db store.DB, in New) (Issue, error) {
	var probs validation.Problems
	probs.Check(validKind(in.Kind), "kind", "must be one of tool_failure, truncated, api, other")
	probs.Check(in.Summary != "", "summary", "is required")
	probs.Check(len(in.Summary) <= MaxSummary, "summary", "must be at most %d bytes", MaxSummary)
	probs.Check(len(in.Detail) <= MaxDetail, "detail", "must be at most %d bytes", MaxDetail)
	probs.Check(in.GuildID != "", "guild_id", "is required")
	if err := probs.Err(); err != nil {
		return Issue{}, err
	}
	return scan(db.QueryRow(ctx, `INSERT INTO tooling_issues (guild_id, agent_id, run_id, kind, summary, detail)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+cols,
		in.GuildID, nullable(in.AgentID), nullable(in.RunID), in.Kind, in.Summary, in.Detail))
}

// guildOrg returns the organisation of a guild the principal may see.
func guildOrg(ctx context.Context, db store.DB, p access.Principal, guildID string) error {
	var orgID string
	if err := db.QueryRow(ctx, `SELECT organisation_id FROM guilds WHERE id = $1`, guildID).Scan(&orgID); err != nil {
		return store.Map(err)
	}
	if !p.CanSeeOrg(orgID) {
		return store.ErrNotFound
	}
	return nil
}

// List returns a visible guild's issues, newest first; status "" means all.
func List(ctx context.Context, db store.DB, p access.Principal, guildID, status string) ([]Issue, error) {
	if status != "" && status != "open" && status != "resolved" {
		var probs validation.Problems
		probs.Add("status", "must be open or resolved")
		return nil, probs.Err()
	}
	if err := guildOrg(ctx, db, p, guildID); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+cols+` FROM tooling_issues
		WHERE guild_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC, id LIMIT 500`, guildID, status)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Issue{}
	for rows.Next() {
		i, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, store.Map(rows.Err())
}

// Resolve marks one visible issue resolved (resolving twice is harmless).
func Resolve(ctx context.Context, db store.DB, p access.Principal, id string) (Issue, error) {
	var guildID string
	if err := db.QueryRow(ctx, `SELECT guild_id FROM tooling_issues WHERE id = $1`, id).Scan(&guildID); err != nil {
		return Issue{}, store.Map(err)
	}
	if err := guildOrg(ctx, db, p, guildID); err != nil {
		return Issue{}, err
	}
	return scan(db.QueryRow(ctx, `UPDATE tooling_issues
		SET status = 'resolved', resolved_at = coalesce(resolved_at, now()), resolved_by = coalesce(resolved_by, $2)
		WHERE id = $1 RETURNING `+cols, id, nullable(p.UserID)))
}

// ResolveAll resolves every open issue of a visible guild and returns how many.
func ResolveAll(ctx context.Context, db store.DB, p access.Principal, guildID string) (int, error) {
	if err := guildOrg(ctx, db, p, guildID); err != nil {
		return 0, err
	}
	tag, err := db.Exec(ctx, `UPDATE tooling_issues SET status = 'resolved', resolved_at = now(), resolved_by = $2
		WHERE guild_id = $1 AND status = 'open'`, guildID, nullable(p.UserID))
	if err != nil {
		return 0, store.Map(err)
	}
	return int(tag.RowsAffected()), nil
}

// Get returns one issue of a guild the principal may see.
func Get(ctx context.Context, db store.DB, p access.Principal, id string) (Issue, error) {
	i, err := scan(db.QueryRow(ctx, `SELECT `+cols+` FROM tooling_issues WHERE id::text = $1`, id))
	if err != nil {
		return Issue{}, err
	}
	if err := guildOrg(ctx, db, p, i.GuildID); err != nil {
		return Issue{}, err
	}
	return i, nil
}
