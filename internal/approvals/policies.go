package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Scopes a policy is set at, widest first.
const (
	ScopePlatform     = "platform"
	ScopeOrganisation = "organisation"
	ScopeGuild        = "guild"
	ScopeAgent        = "agent"
)

// Setting is one row of approval_policies: what one scope says about
// asking before one tool runs.
type Setting struct {
	Scope     string        `json:"scope"`
	ScopeID   string        `json:"scope_id,omitempty"`
	Tool      string        `json:"tool"`
	Ask       bool          `json:"ask"` // false: do not ask here, under a wider Ask
	Policy    Policy        `json:"policy"`
	Wait      time.Duration `json:"-"`
	WaitText  string        `json:"wait"` // Wait as Go writes durations, for the API
	UpdatedBy string        `json:"updated_by,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// Place is where a run's agent sits: the walk's scopes.
type Place struct{ OrganisationID, GuildID, AgentID string }

// Effective is the setting that decides for one tool at a place, and its
// version; Decided is false when no scope says anything (the tool never asks).
type Effective struct {
	Setting
	Decided bool   `json:"decided"`
	Version string `json:"version,omitempty"`
}

// ErrBadSetting is a setting the operator must correct.
var ErrBadSetting = errors.New("approvals: bad setting")

// Save writes a scope's setting for a tool, after checking its rules
// against the tool's argument types.
func Save(ctx context.Context, db store.DB, s Setting, types map[string]ArgType) (Setting, error) {
	if s.Tool == "" {
		return Setting{}, fmt.Errorf("%w: name the tool", ErrBadSetting)
	}
	wait, err := WaitFor(s.Wait)
	if err != nil {
		return Setting{}, fmt.Errorf("%w: %v", ErrBadSetting, err)
	}
	s.Wait = wait
	if !s.Ask && len(s.Policy.Rules) > 0 {
		return Setting{}, fmt.Errorf("%w: rules go with ask: true", ErrBadSetting)
	}
	if err := s.Policy.Validate(types); err != nil {
		return Setting{}, fmt.Errorf("%w: %v", ErrBadSetting, err)
	}
	rules, err := json.Marshal(nonNil(s.Policy.Rules))
	if err != nil {
		return Setting{}, err
	}
	org, guild, agent, err := scopeColumns(s.Scope, s.ScopeID)
	if err != nil {
		return Setting{}, err
	}
	err = db.QueryRow(ctx, `INSERT INTO approval_policies (scope, organisation_id, guild_id, agent_id, tool, ask, rules, wait_seconds, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (scope, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), tool)
		DO UPDATE SET ask = EXCLUDED.ask, rules = EXCLUDED.rules, wait_seconds = EXCLUDED.wait_seconds,
			updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING updated_at`, s.Scope, org, guild, agent, s.Tool, s.Ask, rules, int(s.Wait/time.Second), s.UpdatedBy).Scan(&s.UpdatedAt)
	s.WaitText = s.Wait.String()
	return s, store.Map(err)
}

// Delete removes a scope's setting, so the scope inherits again.
func Delete(ctx context.Context, db store.DB, scope, scopeID, tool string) error {
	if _, _, _, err := scopeColumns(scope, scopeID); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `DELETE FROM approval_policies WHERE scope = $1
		AND coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid) = coalesce($2::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
		AND tool = $3`, scope, nullable(scopeID), tool)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// At lists the settings one scope holds.
func At(ctx context.Context, db store.DB, scope, scopeID string) ([]Setting, error) {
	if _, _, _, err := scopeColumns(scope, scopeID); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT scope, coalesce(scope_id::text, ''), tool, ask, rules, wait_seconds, updated_by, updated_at
		FROM approval_policies WHERE scope = $1
		AND coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid) = coalesce($2::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
		ORDER BY tool`, scope, nullable(scopeID))
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Setting{}
	for rows.Next() {
		s, err := scanSetting(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Resolve walks agent, guild, organisation and platform for the tool: the
// narrowest scope with a setting decides.
func Resolve(ctx context.Context, db store.DB, at Place, tool string) (Effective, error) {
	row := db.QueryRow(ctx, `SELECT scope, coalesce(scope_id::text, ''), tool, ask, rules, wait_seconds, updated_by, updated_at
		FROM approval_policies
		WHERE tool = $1 AND (
			(scope = 'agent' AND agent_id = $2) OR (scope = 'guild' AND guild_id = $3) OR
			(scope = 'organisation' AND organisation_id = $4) OR scope = 'platform')
		ORDER BY CASE scope WHEN 'agent' THEN 0 WHEN 'guild' THEN 1 WHEN 'organisation' THEN 2 ELSE 3 END
		LIMIT 1`, tool, nullable(at.AgentID), nullable(at.GuildID), nullable(at.OrganisationID))
	s, err := scanSetting(row)
	if errors.Is(err, store.ErrNotFound) {
		return Effective{}, nil
	}
	if err != nil {
		return Effective{}, err
	}
	state := "on"
	if s.Ask {
		state = "ask"
	}
	return Effective{Setting: s, Decided: true, Version: Version(s.Scope, s.ScopeID, state, s.Policy)}, nil
}

func scanSetting(row interface{ Scan(...any) error }) (Setting, error) {
	var (
		s     Setting
		rules []byte
		wait  int
	)
	if err := row.Scan(&s.Scope, &s.ScopeID, &s.Tool, &s.Ask, &rules, &wait, &s.UpdatedBy, &s.UpdatedAt); err != nil {
		return Setting{}, store.Map(err)
	}
	if err := json.Unmarshal(rules, &s.Policy.Rules); err != nil {
		return Setting{}, fmt.Errorf("approval policy of %s: %w", s.Tool, err)
	}
	s.Wait = time.Duration(wait) * time.Second
	s.WaitText = s.Wait.String()
	return s, nil
}

func scopeColumns(scope, id string) (org, guild, agent any, err error) {
	switch scope {
	case ScopePlatform:
		if id != "" {
			return nil, nil, nil, fmt.Errorf("%w: the platform scope has no id", ErrBadSetting)
		}
		return nil, nil, nil, nil
	case ScopeOrganisation, ScopeGuild, ScopeAgent:
		if id == "" {
			return nil, nil, nil, fmt.Errorf("%w: %s needs its id", ErrBadSetting, scope)
		}
	default:
		return nil, nil, nil, fmt.Errorf("%w: scope is platform, organisation, guild or agent", ErrBadSetting)
	}
	switch scope {
	case ScopeOrganisation:
		return id, nil, nil, nil
	case ScopeGuild:
		return nil, id, nil, nil
	}
	return nil, nil, id, nil
}

func nullable(id string) any {
	if id == "" {
		return nil
	}
	return id
}

func nonNil(r []Rule) []Rule {
	if r == nil {
		return []Rule{}
	}
	return r
}

// Chain returns every setting that applies at a place, for all tools, in
// one query: the Tools view resolves each tool from it (In).
func Chain(ctx context.Context, db store.DB, at Place) ([]Setting, error) {
	rows, err := db.Query(ctx, `SELECT scope, coalesce(scope_id::text, ''), tool, ask, rules, wait_seconds, updated_by, updated_at
		FROM approval_policies
		WHERE (scope = 'agent' AND agent_id = $1) OR (scope = 'guild' AND guild_id = $2) OR
			(scope = 'organisation' AND organisation_id = $3) OR scope = 'platform'`,
		nullable(at.AgentID), nullable(at.GuildID), nullable(at.OrganisationID))
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []Setting
	for rows.Next() {
		s, err := scanSetting(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

var scopeRank = map[string]int{ScopeAgent: 0, ScopeGuild: 1, ScopeOrganisation: 2, ScopePlatform: 3}

// In resolves one tool from a place's chain as Resolve does: the narrowest
// scope with a setting decides.
func In(chain []Setting, tool string) Effective {
	var best *Setting
	for i := range chain {
		s := &chain[i]
		if s.Tool == tool && (best == nil || scopeRank[s.Scope] < scopeRank[best.Scope]) {
			best = s
		}
	}
	if best == nil {
		return Effective{}
	}
	state := "on"
	if best.Ask {
		state = "ask"
	}
	return Effective{Setting: *best, Decided: true, Version: Version(best.Scope, best.ScopeID, state, best.Policy)}
}
