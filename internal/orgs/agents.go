package orgs

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// AgentConfig holds the flags that decide which tool families a run may offer.
type AgentConfig struct {
	Browser    bool `json:"browser"`
	Coding     bool `json:"coding"`
	Scripting  bool `json:"scripting"`
	Memory     bool `json:"memory"`
	MaxScripts int  `json:"max_scripts"`
}

// DefaultAgentConfig is the configuration of a new agent.
func DefaultAgentConfig() AgentConfig {
	return AgentConfig{Scripting: true, Memory: true, MaxScripts: 10}
}

// AgentConfigInput changes some flags; nil fields keep their value.
type AgentConfigInput struct {
	Browser    *bool `json:"browser"`
	Coding     *bool `json:"coding"`
	Scripting  *bool `json:"scripting"`
	Memory     *bool `json:"memory"`
	MaxScripts *int  `json:"max_scripts"`
}

func (in *AgentConfigInput) apply(c AgentConfig) AgentConfig {
	if in == nil {
		return c
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Browser, in.Browser)
	set(&c.Coding, in.Coding)
	set(&c.Scripting, in.Scripting)
	set(&c.Memory, in.Memory)
	if in.MaxScripts != nil {
		c.MaxScripts = *in.MaxScripts
	}
	return c
}

// Agent is one AI agent of a guild.
type Agent struct {
	ID             string      `json:"id"`
	GuildID        string      `json:"guild_id"`
	OrganisationID string      `json:"organisation_id"`
	Name           string      `json:"name"`
	Model          string      `json:"model"`
	Prompt         string      `json:"prompt"`
	Config         AgentConfig `json:"config"`
	CreatedAt      time.Time   `json:"created_at"`
	UpdatedAt      time.Time   `json:"updated_at"`
}

// AgentInput creates or changes an agent; nil fields are left as they are.
type AgentInput struct {
	Name   *string           `json:"name"`
	Model  *string           `json:"model"`
	Prompt *string           `json:"prompt"`
	Config *AgentConfigInput `json:"config"`
}

const agentCols = `a.id, a.guild_id, g.organisation_id, a.name, a.model, a.prompt, a.config, a.created_at, a.updated_at`

func scanAgent(row interface{ Scan(...any) error }) (Agent, error) {
	var a Agent
	var cfg []byte
	err := row.Scan(&a.ID, &a.GuildID, &a.OrganisationID, &a.Name, &a.Model, &a.Prompt, &cfg, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return a, err
	}
	a.Config = DefaultAgentConfig()
	err = json.Unmarshal(cfg, &a.Config)
	return a, err
}

func checkAgent(in AgentInput, cfg AgentConfig, create bool) error {
	var probs validation.Problems
	checkName(&probs, "name", in.Name, create)
	if in.Model != nil {
		probs.Check(len(*in.Model) <= 200, "model", "must be at most 200 characters")
	}
	if in.Prompt != nil {
		probs.Check(len(*in.Prompt) <= 100_000, "prompt", "must be at most 100000 characters")
	}
	probs.Check(cfg.MaxScripts >= 0 && cfg.MaxScripts <= 1000, "config.max_scripts", "must be between 0 and 1000")
	return probs.Err()
}

// CreateAgent adds an agent to a visible guild, while its organisation has
// fewer than maxPerOrg agents (0 = no cap; the API passes
// GUILDS_MAX_AGENTS_PER_ORG).
func CreateAgent(ctx context.Context, db store.DB, p access.Principal, guildID string, in AgentInput, maxPerOrg int) (Agent, error) {
	g, err := GetGuild(ctx, db, p, guildID)
	if err != nil {
		return Agent{}, err
	}
	cfg := in.Config.apply(DefaultAgentConfig())
	if err := checkAgent(in, cfg, true); err != nil {
		return Agent{}, err
	}
	if err := checkAgentRoom(ctx, db, g.OrganisationID, maxPerOrg); err != nil {
		return Agent{}, err
	}
	str := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	cfgJSON, _ := json.Marshal(cfg)
	var id string
	err = db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt, config)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		guildID, strings.TrimSpace(*in.Name), str(in.Model), str(in.Prompt), cfgJSON).Scan(&id)
	if err != nil {
		return Agent{}, store.Map(err)
	}
	return GetAgent(ctx, db, p, id)
}

// ListAgents lists the agents of a visible guild.
func ListAgents(ctx context.Context, db store.DB, p access.Principal, guildID string) ([]Agent, error) {
	if _, err := GetGuild(ctx, db, p, guildID); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+agentCols+` FROM agents a JOIN guilds g ON g.id = a.guild_id
		WHERE a.guild_id = $1 ORDER BY a.name`, guildID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Agent{}
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// GetAgent returns an agent of a visible organisation.
func GetAgent(ctx context.Context, db store.DB, p access.Principal, id string) (Agent, error) {
	a, err := LoadAgent(ctx, db, id)
	if err != nil {
		return a, err
	}
	if !p.CanSeeOrg(a.OrganisationID) {
		return Agent{}, store.ErrNotFound
	}
	return a, nil
}

// LoadAgent reads an agent without a visibility check, for workers acting on the platform's behalf.
func LoadAgent(ctx context.Context, db store.DB, id string) (Agent, error) {
	a, err := scanAgent(db.QueryRow(ctx, `SELECT `+agentCols+` FROM agents a JOIN guilds g ON g.id = a.guild_id
		WHERE a.id = $1`, id))
	return a, store.Map(err)
}

// UpdateAgent changes the given fields of a visible agent.
func UpdateAgent(ctx context.Context, db store.DB, p access.Principal, id string, in AgentInput) (Agent, error) {
	cur, err := GetAgent(ctx, db, p, id)
	if err != nil {
		return Agent{}, err
	}
	cfg := in.Config.apply(cur.Config)
	if err := checkAgent(in, cfg, false); err != nil {
		return Agent{}, err
	}
	cfgJSON, _ := json.Marshal(cfg)
	_, err = db.Exec(ctx, `UPDATE agents SET name = coalesce($2, name), model = coalesce($3, model),
		prompt = coalesce($4, prompt), config = $5, updated_at = now() WHERE id = $1`,
		id, trimmed(in.Name), in.Model, in.Prompt, cfgJSON)
	if err != nil {
		return Agent{}, store.Map(err)
	}
	return GetAgent(ctx, db, p, id)
}

// DeleteAgent removes a visible agent.
func DeleteAgent(ctx context.Context, db store.DB, p access.Principal, id string) error {
	if _, err := GetAgent(ctx, db, p, id); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM agents WHERE id = $1`, id)
	return store.Map(err)
}
