package records

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Access is what an agent may do with a collection.
type Access string

// Access levels, from none.
const (
	AccessNone  Access = "none"
	AccessRead  Access = "read"
	AccessWrite Access = "write"
)

func (a Access) valid() bool { return a == AccessNone || a == AccessRead || a == AccessWrite }

// Grant is one row of collection_grants: for a guild or for one agent.
type Grant struct {
	CollectionID string    `json:"collection_id"`
	GuildID      *string   `json:"guild_id,omitempty"`
	AgentID      *string   `json:"agent_id,omitempty"`
	Access       Access    `json:"access"`
	CreatedAt    time.Time `json:"created_at"`
}

// GrantInput sets the grant of one guild or one agent.
type GrantInput struct {
	GuildID *string `json:"guild_id"`
	AgentID *string `json:"agent_id"`
	Access  Access  `json:"access"`
}

// PutGrant creates or replaces one grant. The subject must belong to the
// collection's organisation; a guild grant on a guild's own table is only
// for that guild (other guilds reach it through agent grants).
func PutGrant(ctx context.Context, db store.DB, c Collection, in GrantInput) (Grant, error) {
	var p validation.Problems
	p.Check((in.GuildID == nil) != (in.AgentID == nil), "guild_id", "give exactly one of guild_id and agent_id")
	p.Check(in.Access.valid(), "access", `must be "none", "read" or "write"`)
	if err := p.Err(); err != nil {
		return Grant{}, err
	}
	var ok bool
	if in.GuildID != nil {
		_ = db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM guilds WHERE id = $1 AND organisation_id = $2)`, *in.GuildID, c.OrganisationID).Scan(&ok)
		p.Check(ok, "guild_id", "is not a guild of this collection's organisation")
		if ok && c.GuildID != nil && *c.GuildID != *in.GuildID {
			p.Add("guild_id", "this collection belongs to another guild; grant its agents one by one")
		}
	} else {
		_ = db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agents a JOIN guilds g ON g.id = a.guild_id
			WHERE a.id = $1 AND g.organisation_id = $2)`, *in.AgentID, c.OrganisationID).Scan(&ok)
		p.Check(ok, "agent_id", "is not an agent of this collection's organisation")
	}
	if err := p.Err(); err != nil {
		return Grant{}, err
	}
	var g Grant
	err := db.QueryRow(ctx, `INSERT INTO collection_grants (collection_id, guild_id, agent_id, access)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (collection_id, subject_id) DO UPDATE SET access = EXCLUDED.access
		RETURNING collection_id, guild_id, agent_id, access, created_at`, c.ID, in.GuildID, in.AgentID, in.Access).
		Scan(&g.CollectionID, &g.GuildID, &g.AgentID, &g.Access, &g.CreatedAt)
	return g, store.Map(err)
}

// ListGrants lists a collection's grants.
func ListGrants(ctx context.Context, db store.DB, collectionID string) ([]Grant, error) {
	rows, err := db.Query(ctx, `SELECT collection_id, guild_id, agent_id, access, created_at
		FROM collection_grants WHERE collection_id = $1 ORDER BY created_at, subject_id`, collectionID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Grant{}
	for rows.Next() {
		var g Grant
		if err := rows.Scan(&g.CollectionID, &g.GuildID, &g.AgentID, &g.Access, &g.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeleteGrant removes the grant of a guild or agent (subjectID).
func DeleteGrant(ctx context.Context, db store.DB, collectionID, subjectID string) error {
	tag, err := db.Exec(ctx, `DELETE FROM collection_grants WHERE collection_id = $1 AND subject_id = $2`, collectionID, subjectID)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Agent is who a record tool acts for.
type Agent struct {
	ID, GuildID, OrgID string
}

// accessSQL resolves an agent's access to each collection c: its own grant
// row wins; else its guild's row; else write on its guild's own table.
const accessSQL = `coalesce(ag.access, gg.access, CASE WHEN c.guild_id = $2 THEN 'write' END, 'none')`

const accessJoins = ` LEFT JOIN collection_grants ag ON ag.collection_id = c.id AND ag.agent_id = $1
	LEFT JOIN collection_grants gg ON gg.collection_id = c.id AND gg.guild_id = $2`

// Reachable lists the collections the agent may at least read, with its access.
func Reachable(ctx context.Context, db store.DB, a Agent) ([]Collection, []Access, error) {
	rows, err := db.Query(ctx, `SELECT `+prefixed("c.", collCols)+`, `+accessSQL+` FROM collections c`+accessJoins+`
		WHERE c.organisation_id = $3 AND `+accessSQL+` <> 'none' ORDER BY c.name`, a.ID, a.GuildID, a.OrgID)
	if err != nil {
		return nil, nil, store.Map(err)
	}
	defer rows.Close()
	var cs []Collection
	var as []Access
	for rows.Next() {
		var acc Access
		var c Collection
		var cols []byte
		if err := rows.Scan(&c.ID, &c.OrganisationID, &c.GuildID, &c.Name, &c.Description, &cols, &c.CreatedAt, &c.UpdatedAt, &acc); err != nil {
			return nil, nil, err
		}
		if err := jsonUnmarshal(cols, &c.Columns); err != nil {
			return nil, nil, err
		}
		cs = append(cs, c)
		as = append(as, acc)
	}
	return cs, as, rows.Err()
}

// Open resolves a collection by name for an agent that needs at least want:
// 404 when it does not exist or is not granted, 403 when a write meets a
// read grant.
func Open(ctx context.Context, db store.DB, a Agent, name string, want Access) (Collection, error) {
	var acc Access
	var c Collection
	var cols []byte
	err := db.QueryRow(ctx, `SELECT `+prefixed("c.", collCols)+`, `+accessSQL+` FROM collections c`+accessJoins+`
		WHERE c.organisation_id = $3 AND c.name = $4`, a.ID, a.GuildID, a.OrgID, name).
		Scan(&c.ID, &c.OrganisationID, &c.GuildID, &c.Name, &c.Description, &cols, &c.CreatedAt, &c.UpdatedAt, &acc)
	if err != nil {
		if err := store.Map(err); err == store.ErrNotFound {
			return c, unknownCollection(ctx, db, a, name)
		}
		return c, store.Map(err)
	}
	if acc == AccessNone {
		return c, unknownCollection(ctx, db, a, name)
	}
	if want == AccessWrite && acc != AccessWrite {
		return c, artifacts.Errorf(http.StatusForbidden, "collection %q is granted read-only to this agent; it cannot add, change or remove records", name)
	}
	return c, jsonUnmarshal(cols, &c.Columns)
}

// maxNamed bounds how many collections a not-found refusal names.
const maxNamed = 30

// unknownCollection is the 404 for a collection the agent may not use. It
// names the collections the agent can use, so the model can correct the name
// without a tool to list them; it never names one the agent cannot reach.
func unknownCollection(ctx context.Context, db store.DB, a Agent, name string) error {
	cs, acc, err := Reachable(ctx, db, a)
	if err != nil {
		return notFound(name)
	}
	if len(cs) == 0 {
		return artifacts.Errorf(http.StatusNotFound, "collection %q not found; no collection is granted to this agent", strings.TrimSpace(name))
	}
	named := make([]string, 0, min(len(cs), maxNamed))
	for i, c := range cs {
		if i == maxNamed {
			named = append(named, fmt.Sprintf("and %d more", len(cs)-maxNamed))
			break
		}
		named = append(named, fmt.Sprintf("%s (%s)", c.Name, acc[i]))
	}
	return artifacts.Errorf(http.StatusNotFound, "collection %q not found; collections this agent can use: %s",
		strings.TrimSpace(name), strings.Join(named, ", "))
}
