package grants

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// WalkStep is what one scope of an agent's chain says about one tool: the
// switch of its server (remote tools) and the switch of the tool itself.
type WalkStep struct {
	Scope Scope `json:"scope"`
	// Server is the server's switch at this scope (remote tools only).
	Server Switch `json:"server,omitempty"`
	// Tool is the tool's own switch at this scope: a native tool's binding,
	// or a remote tool's overlay for the login that serves it.
	Tool Switch `json:"tool"`
	// Login is the login this scope names for the server, when it names one.
	Login string `json:"login,omitempty"`
}

// Walk is the resolution walk of one tool for one agent, the way the Tools
// view decides it: the steps from the platform down and where it ended.
type Walk struct {
	Steps     []WalkStep `json:"steps"`
	Enabled   bool       `json:"enabled"`
	DecidedBy Scope      `json:"decided_by,omitempty"`
	// Login is the login serving the server at the agent (remote tools).
	Login string `json:"login,omitempty"`
}

// WalkTool walks an agent's chain for one tool. serverID is "" for a native
// tool; name is the tool's model-facing name (a remote tool's {slug}_{name}).
func WalkTool(ctx context.Context, db store.DB, agentID, serverID, name string) (Walk, error) {
	pl, err := LoadPlace(ctx, db, ScopeAgent, agentID)
	if err != nil {
		return Walk{}, err
	}
	chain, err := loadChain(ctx, db, pl)
	if err != nil {
		return Walk{}, err
	}
	res := Resolve(plainRows(chain))
	w := Walk{Steps: []WalkStep{}}
	if serverID == "" {
		d := res.Native[name]
		w.Enabled, w.DecidedBy = d.Enabled, d.DecidedBy
	} else {
		w.Login = res.Servers[serverID].ConnectionID
		w.Enabled, w.DecidedBy = res.ToolState(serverID, name)
	}
	for _, scope := range []Scope{ScopePlatform, ScopeOrganisation, ScopeGuild, ScopeAgent} {
		st := WalkStep{Scope: scope}
		if serverID == "" {
			st.Tool = switchAt(chain, scope, KindNativeTool, name)
		} else {
			st.Server = switchAt(chain, scope, KindMCP, serverID)
			st.Tool = toolSwitchAt(chain, scope, name, w.Login)
			for _, r := range chain {
				if r.Scope == scope && r.Kind == KindMCP && r.ServerID == serverID && r.ConnectionID != "" {
					st.Login = r.ConnectionID
				}
			}
		}
		w.Steps = append(w.Steps, st)
	}
	return w, nil
}
