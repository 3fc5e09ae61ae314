package agentsecrets

import (
	"context"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Scope is where a secret is owned or a grant row is set.
type Scope string

// Scopes, widest first.
const (
	ScopeOrganisation Scope = "organisation"
	ScopeGuild        Scope = "guild"
	ScopeAgent        Scope = "agent"
)

var scopeRank = map[Scope]int{ScopeOrganisation: 0, ScopeGuild: 1, ScopeAgent: 2}

// ParseScope reads a scope as the API names it: organisation (or orgs),
// guild (or guilds), agent (or agents).
func ParseScope(s string) (Scope, bool) {
	switch s {
	case "organisation", "orgs", "org":
		return ScopeOrganisation, true
	case "guild", "guilds":
		return ScopeGuild, true
	case "agent", "agents":
		return ScopeAgent, true
	}
	return "", false
}

// Place is a scope with the chain above it.
type Place struct {
	Scope   Scope  `json:"scope"`
	OrgID   string `json:"organisation_id"`
	GuildID string `json:"guild_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
}

// ID is the id of the place's own scope.
func (pl Place) ID() string {
	switch pl.Scope {
	case ScopeGuild:
		return pl.GuildID
	case ScopeAgent:
		return pl.AgentID
	}
	return pl.OrgID
}

// Contains reports whether other is this place or below it.
func (pl Place) Contains(other Place) bool {
	switch pl.Scope {
	case ScopeOrganisation:
		return other.OrgID == pl.OrgID
	case ScopeGuild:
		return other.GuildID == pl.GuildID && pl.GuildID != ""
	case ScopeAgent:
		return other.Scope == ScopeAgent && other.AgentID == pl.AgentID && pl.AgentID != ""
	}
	return false
}

// LoadPlace finds a scope and its parents; store.ErrNotFound when absent.
func LoadPlace(ctx context.Context, db store.DB, scope Scope, id string) (Place, error) {
	pl := Place{Scope: scope}
	if _, err := uuid.Parse(id); err != nil {
		return pl, store.ErrNotFound
	}
	var err error
	switch scope {
	case ScopeOrganisation:
		err = db.QueryRow(ctx, `SELECT id::text FROM organisations WHERE id = $1`, id).Scan(&pl.OrgID)
	case ScopeGuild:
		err = db.QueryRow(ctx, `SELECT id::text, organisation_id::text FROM guilds WHERE id = $1`, id).Scan(&pl.GuildID, &pl.OrgID)
	case ScopeAgent:
		err = db.QueryRow(ctx, `SELECT a.id::text, a.guild_id::text, g.organisation_id::text FROM agents a
			JOIN guilds g ON g.id = a.guild_id WHERE a.id = $1`, id).Scan(&pl.AgentID, &pl.GuildID, &pl.OrgID)
	default:
		return pl, store.ErrNotFound
	}
	return pl, store.Map(err)
}

// VisiblePlace loads a place the principal can see; store.ErrNotFound otherwise.
func VisiblePlace(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (Place, error) {
	pl, err := LoadPlace(ctx, db, scope, id)
	if err != nil {
		return Place{}, err
	}
	if !p.CanSeeOrg(pl.OrgID) {
		return Place{}, store.ErrNotFound
	}
	return pl, nil
}

func invalid(field, format string, args ...any) error {
	var p validation.Problems
	p.Add(field, format, args...)
	return p.Err()
}
