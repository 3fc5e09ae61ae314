package grants

import (
	"context"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Scope names a level of the grant chain.
type Scope string

const (
	ScopePlatform     Scope = "platform"
	ScopeOrganisation Scope = "organisation"
	ScopeGuild        Scope = "guild"
	ScopeAgent        Scope = "agent"
)

// chainOrder ranks the scopes in the order resolution walks them.
var chainOrder = map[Scope]int{ScopePlatform: 0, ScopeOrganisation: 1, ScopeGuild: 2, ScopeAgent: 3}

func (s Scope) valid() bool { _, ok := chainOrder[s]; return ok }

// Place is a scope with its id and the chain above it. For the platform all
// ids are empty; for an organisation only OrgID is set; and so on.
type Place struct {
	Scope   Scope  `json:"scope"`
	OrgID   string `json:"organisation_id,omitempty"`
	GuildID string `json:"guild_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
}

// ID is the id of the place's own scope ("" for the platform).
func (pl Place) ID() string {
	switch pl.Scope {
	case ScopeOrganisation:
		return pl.OrgID
	case ScopeGuild:
		return pl.GuildID
	case ScopeAgent:
		return pl.AgentID
	}
	return ""
}

// Contains reports whether other is this place or below it.
func (pl Place) Contains(other Place) bool {
	switch pl.Scope {
	case ScopePlatform:
		return true
	case ScopeOrganisation:
		return other.OrgID == pl.OrgID
	case ScopeGuild:
		return other.GuildID == pl.GuildID && other.GuildID != ""
	case ScopeAgent:
		return other.AgentID == pl.AgentID && other.AgentID != ""
	}
	return false
}

// checkScopeInput validates a (scope, id) pair, adding problems under the given field names.
func checkScopeInput(p *validation.Problems, scopeField, idField string, scope Scope, id string) {
	if !scope.valid() {
		p.Add(scopeField, "must be platform, organisation, guild or agent")
		return
	}
	if scope == ScopePlatform {
		p.Check(id == "", idField, "must be empty for the platform scope")
	} else {
		p.Check(id != "", idField, "is required for the %s scope", scope)
	}
}

// LoadPlace finds a scope and its parents; store.ErrNotFound when absent.
func LoadPlace(ctx context.Context, db store.DB, scope Scope, id string) (Place, error) {
	pl := Place{Scope: scope}
	var err error
	switch scope {
	case ScopePlatform:
		return pl, nil
	case ScopeOrganisation:
		err = db.QueryRow(ctx, `SELECT id FROM organisations WHERE id::text = $1`, id).Scan(&pl.OrgID)
	case ScopeGuild:
		err = db.QueryRow(ctx, `SELECT id, organisation_id FROM guilds WHERE id::text = $1`, id).Scan(&pl.GuildID, &pl.OrgID)
	case ScopeAgent:
		err = db.QueryRow(ctx, `SELECT a.id, a.guild_id, g.organisation_id FROM agents a JOIN guilds g ON g.id = a.guild_id
			WHERE a.id::text = $1`, id).Scan(&pl.AgentID, &pl.GuildID, &pl.OrgID)
	default:
		return pl, store.ErrNotFound
	}
	return pl, store.Map(err)
}

// visiblePlace loads a place the principal can see (404 otherwise).
func visiblePlace(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (Place, error) {
	pl, err := LoadPlace(ctx, db, scope, id)
	if err != nil {
		return pl, err
	}
	if scope != ScopePlatform && !p.CanSeeOrg(pl.OrgID) {
		return Place{}, store.ErrNotFound
	}
	return pl, nil
}

// mutablePlace is a visible place the principal may change grants at: the
// platform scope is reserved for instance admins.
func mutablePlace(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (Place, error) {
	if scope == ScopePlatform && !p.Admin {
		return Place{}, access.ErrForbidden
	}
	return visiblePlace(ctx, db, p, scope, id)
}

// LoadPlaceVisible loads a scope the principal can see; store.ErrNotFound otherwise.
func LoadPlaceVisible(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (Place, error) {
	return visiblePlace(ctx, db, p, scope, id)
}
