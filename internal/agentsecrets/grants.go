package agentsecrets

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Grant is one grant row: at a scope, the secret is on or off for the
// agents at and below it.
type Grant struct {
	Scope     Scope     `json:"scope"`
	ScopeID   string    `json:"scope_id"`
	Enabled   bool      `json:"enabled"`
	UpdatedBy string    `json:"updated_by"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Reach is an agent a secret reaches, and the scope that decided it.
type Reach struct {
	AgentID   string `json:"agent_id"`
	AgentName string `json:"agent_name"`
	DecidedBy Scope  `json:"decided_by"`
}

// reaches walks a secret's grant rows along an agent's chain: an
// agent-owned secret starts on for its agent, any other starts off; each
// row of the chain, widest first, replaces the state.
func reaches(owner Scope, grants []Grant, agent Place) (bool, Scope) {
	on, by := owner == ScopeAgent, owner
	sorted := append([]Grant(nil), grants...)
	sort.SliceStable(sorted, func(i, j int) bool { return scopeRank[sorted[i].Scope] < scopeRank[sorted[j].Scope] })
	for _, g := range sorted {
		if (g.Scope == ScopeOrganisation && g.ScopeID == agent.OrgID) || (g.Scope == ScopeGuild && g.ScopeID == agent.GuildID) ||
			(g.Scope == ScopeAgent && g.ScopeID == agent.AgentID) {
			on, by = g.Enabled, g.Scope
		}
	}
	return on, by
}

// SetGrant turns the secret name of owner on or off for the agents at and
// below target, which must lie within owner.
func SetGrant(ctx context.Context, db store.DB, owner Place, name string, target Place, enabled bool, actor string) (Secret, error) {
	s, err := Get(ctx, db, owner, name)
	if err != nil {
		return s, err
	}
	if !owner.Contains(target) {
		return s, invalid("scope_id", "the %s %s is outside this secret's owner (%s %s): a secret is granted only within the scope that owns it",
			target.Scope, target.ID(), owner.Scope, owner.ID())
	}
	var guildID, agentID *string
	if target.Scope != ScopeOrganisation {
		guildID = &target.GuildID
	}
	if target.Scope == ScopeAgent {
		agentID = &target.AgentID
	}
	_, err = db.Exec(ctx, `INSERT INTO agent_secret_grants (secret_id, scope, scope_id, guild_id, agent_id, enabled, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (secret_id, scope, scope_id) DO UPDATE SET enabled = excluded.enabled, updated_by = excluded.updated_by, updated_at = now()`,
		s.ID, target.Scope, target.ID(), guildID, agentID, enabled, actor)
	if err != nil {
		return s, store.Map(err)
	}
	action := "revoke"
	if enabled {
		action = "grant"
	}
	if err := recordChange(ctx, db, owner, s.ID, name, action, actor, map[string]any{"scope": target.Scope, "scope_id": target.ID()}); err != nil {
		return s, err
	}
	return Get(ctx, db, owner, name)
}

// RemoveGrant deletes the grant row at target, so the state there is
// inherited again; store.ErrNotFound when there was none.
func RemoveGrant(ctx context.Context, db store.DB, owner Place, name string, target Place, actor string) (Secret, error) {
	s, err := Get(ctx, db, owner, name)
	if err != nil {
		return s, err
	}
	tag, err := db.Exec(ctx, `DELETE FROM agent_secret_grants WHERE secret_id = $1 AND scope = $2 AND scope_id = $3`,
		s.ID, target.Scope, target.ID())
	if err != nil {
		return s, store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return s, store.ErrNotFound
	}
	if err := recordChange(ctx, db, owner, s.ID, name, "ungrant", actor, map[string]any{"scope": target.Scope, "scope_id": target.ID()}); err != nil {
		return s, err
	}
	return Get(ctx, db, owner, name)
}

func loadGrants(ctx context.Context, db store.DB, secretIDs []string) (map[string][]Grant, error) {
	rows, err := db.Query(ctx, `SELECT secret_id::text, scope, scope_id::text, enabled, updated_by, updated_at
		FROM agent_secret_grants WHERE secret_id = ANY($1::uuid[]) ORDER BY secret_id, scope, scope_id`, secretIDs)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := map[string][]Grant{}
	for rows.Next() {
		var id string
		var g Grant
		if err := rows.Scan(&id, &g.Scope, &g.ScopeID, &g.Enabled, &g.UpdatedBy, &g.UpdatedAt); err != nil {
			return nil, store.Map(err)
		}
		out[id] = append(out[id], g)
	}
	return out, store.Map(rows.Err())
}

type agentRow struct {
	Place
	name string
}

// agentsUnder lists the agents at or below a place.
func agentsUnder(ctx context.Context, db store.DB, pl Place) ([]agentRow, error) {
	rows, err := db.Query(ctx, `SELECT a.id::text, a.name, a.guild_id::text, g.organisation_id::text FROM agents a
		JOIN guilds g ON g.id = a.guild_id
		WHERE ($1 = 'organisation' AND g.organisation_id = $2::uuid) OR ($1 = 'guild' AND a.guild_id = $2::uuid)
		   OR ($1 = 'agent' AND a.id = $2::uuid)
		ORDER BY a.name, a.id`, pl.Scope, pl.ID())
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []agentRow
	for rows.Next() {
		a := agentRow{Place: Place{Scope: ScopeAgent}}
		if err := rows.Scan(&a.AgentID, &a.name, &a.GuildID, &a.OrgID); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, a)
	}
	return out, store.Map(rows.Err())
}

// describeReach fills each secret's grant rows and the agents it reaches.
func describeReach(ctx context.Context, db store.DB, owner Place, list []Secret) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	grants, err := loadGrants(ctx, db, ids)
	if err != nil {
		return err
	}
	agents, err := agentsUnder(ctx, db, owner)
	if err != nil {
		return err
	}
	for i := range list {
		s := &list[i]
		s.Grants = append([]Grant{}, grants[s.ID]...)
		s.Reaches = []Reach{}
		for _, a := range agents {
			if on, by := reaches(s.OwnerScope, s.Grants, a.Place); on {
				s.Reaches = append(s.Reaches, Reach{AgentID: a.AgentID, AgentName: a.name, DecidedBy: by})
			}
		}
	}
	return nil
}

// Value is a granted secret as a run uses it.
type Value struct {
	Name  string
	Value string
}

// Granted opens every secret that reaches the agent. When two granted
// secrets share a name, the one owned nearest the agent wins (agent, then
// guild, then organisation).
func Granted(ctx context.Context, db store.DB, kr *secret.Keyring, agentID string) ([]Value, error) {
	agent, err := LoadPlace(ctx, db, ScopeAgent, agentID)
	if err != nil {
		return nil, err
	}
	return granted(ctx, db, kr, agent)
}

func granted(ctx context.Context, db store.DB, kr *secret.Keyring, agent Place) ([]Value, error) {
	rows, err := db.Query(ctx, `SELECT id::text, name, owner_scope, ciphertext FROM agent_secrets
		WHERE (owner_scope = 'organisation' AND owner_id = $1::uuid) OR (owner_scope = 'guild' AND owner_id = $2::uuid)
		   OR (owner_scope = 'agent' AND owner_id = $3::uuid)`, agent.OrgID, agent.GuildID, agent.AgentID)
	if err != nil {
		return nil, store.Map(err)
	}
	type sealed struct {
		id, name string
		owner    Scope
		ct       []byte
	}
	var all []sealed
	for rows.Next() {
		var s sealed
		if err := rows.Scan(&s.id, &s.name, &s.owner, &s.ct); err != nil {
			rows.Close()
			return nil, store.Map(err)
		}
		all = append(all, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Map(err)
	}
	if len(all) == 0 {
		return nil, nil
	}
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.id
	}
	grants, err := loadGrants(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	best := map[string]sealed{}
	for _, s := range all {
		if on, _ := reaches(s.owner, grants[s.id], agent); !on {
			continue
		}
		if prev, ok := best[s.name]; !ok || scopeRank[s.owner] > scopeRank[prev.owner] {
			best[s.name] = s
		}
	}
	out := make([]Value, 0, len(best))
	for _, s := range best {
		v, err := open(kr, s.id, s.ct)
		if err != nil {
			return nil, err
		}
		out = append(out, Value{Name: s.name, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Source gives a run what its agent's granted secrets are: the redaction
// set (RunSecrets) and the shell environment (Env).
type Source struct {
	DB      store.DB
	Keyring *secret.Keyring
}

// RunSecrets returns every granted value, for the run's redaction set.
func (s Source) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	if s.Keyring == nil {
		return nil, nil
	}
	vals, err := Granted(ctx, s.DB, s.Keyring, agentID)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.Value
	}
	return out, nil
}

// Env returns the secrets granted to the call's agent as environment
// variables of the command the call runs. Each one handed over is a read in
// the audit trail (its name, the agent and run that read it, never its
// value), written before the values leave.
func (s Source) Env(ctx context.Context, call tools.Call) (map[string]string, error) {
	if s.Keyring == nil {
		return nil, nil
	}
	agent, err := LoadPlace(ctx, s.DB, ScopeAgent, call.AgentID)
	if err != nil {
		return nil, err
	}
	vals, err := granted(ctx, s.DB, s.Keyring, agent)
	if err != nil || len(vals) == 0 {
		return nil, err
	}
	out := make(map[string]string, len(vals))
	names := make([]string, len(vals))
	for i, v := range vals {
		out[v.Name], names[i] = v.Value, v.Name
	}
	if err := audit.RecordEach(ctx, s.DB, audit.Event{OrganisationID: agent.OrgID, GuildID: agent.GuildID, AgentID: agent.AgentID,
		RunID: call.RunID, Seq: call.Seq, Trigger: call.Trigger, Action: audit.ActionSecretRead, Kind: "secret",
		Outcome: "read", Actor: audit.AgentActor(agent.AgentID)}, names); err != nil {
		return nil, fmt.Errorf("record the reads of the agent's secrets: %w", err)
	}
	return out, nil
}
