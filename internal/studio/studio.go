// Package studio assembles what an operator investigates an issue with: the
// run it came from, the failing call with its stamped arguments and result,
// the tool's schema, the walk of switches that offered it and the login that
// served it. It reads only; Test and Resolve are the existing routes.
package studio

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// CallRef names one call of the run, for picking another one.
type CallRef struct {
	Seq     int    `json:"seq"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
}

// Tool is the called tool as the run offered it.
type Tool struct {
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	ServerSlug  string          `json:"server_slug,omitempty"`
	ServerName  string          `json:"server_name,omitempty"`
	// ServerAuth is how the server's logins authenticate: none, token or
	// oauth ("none": a login holds no credential whose health to show).
	ServerAuth string `json:"server_auth,omitempty"`
	RemoteName string `json:"remote_name,omitempty"`
}

// View is the studio of one issue. Run, Call, Tool, Walk and Login are nil
// when the issue does not lead to them (filed outside a run, a run with no
// call, a native tool with no login); Missing says what is absent and why.
type View struct {
	Issue     issues.Issue            `json:"issue"`
	GuildName string                  `json:"guild_name"`
	AgentName string                  `json:"agent_name,omitempty"`
	Run       *runs.Run               `json:"run,omitempty"`
	Calls     []CallRef               `json:"calls"`
	Call      *runs.ToolCall          `json:"call,omitempty"`
	Tool      *Tool                   `json:"tool,omitempty"`
	Walk      *grants.Walk            `json:"walk,omitempty"`
	Login     *connections.Connection `json:"login,omitempty"`
	// Testable says whether the call can be tried again with Test (a remote
	// tool whose login is connected); WhyNot says why not otherwise.
	Testable bool   `json:"testable"`
	WhyNot   string `json:"why_not,omitempty"`
	Missing  string `json:"missing,omitempty"`
}

// Load builds the studio of an issue the principal may see. seq picks a
// call of the run; 0 picks the failing one (the last call that did not
// succeed, other than the report itself, else the last such call).
func Load(ctx context.Context, db store.DB, p access.Principal, issueID string, seq int) (View, error) {
	iss, err := issues.Get(ctx, db, p, issueID)
	if err != nil {
		return View{}, err
	}
	v := View{Issue: iss, Calls: []CallRef{}}
	if err := db.QueryRow(ctx, `SELECT name FROM guilds WHERE id = $1`, iss.GuildID).Scan(&v.GuildName); err != nil {
		return View{}, store.Map(err)
	}
	if iss.AgentID != nil {
		if err := db.QueryRow(ctx, `SELECT name FROM agents WHERE id = $1`, *iss.AgentID).Scan(&v.AgentName); err != nil && !errors.Is(store.Map(err), store.ErrNotFound) {
			return View{}, store.Map(err)
		}
	}
	if iss.RunID == nil {
		v.Missing = "the issue was filed outside a run"
		return v, nil
	}
	r, err := runs.Get(ctx, db, p, *iss.RunID)
	if errors.Is(err, store.ErrNotFound) {
		v.Missing = "the run of this issue no longer exists"
		return v, nil
	} else if err != nil {
		return View{}, err
	}
	v.Run = &r
	calls, err := runs.ToolCalls(ctx, db, r.ID)
	if err != nil {
		return View{}, err
	}
	for _, c := range calls {
		v.Calls = append(v.Calls, CallRef{Seq: c.Seq, Tool: c.Tool, Outcome: c.Outcome})
	}
	call, ok := pick(calls, seq)
	if !ok {
		if seq != 0 {
			return View{}, store.ErrNotFound
		}
		v.Missing = "the run made no call besides the report"
		return v, nil
	}
	v.Call = &call
	return v, v.explain(ctx, db, p, r)
}

// pick chooses the call to show.
func pick(calls []runs.ToolCall, seq int) (runs.ToolCall, bool) {
	if seq != 0 {
		for _, c := range calls {
			if c.Seq == seq {
				return c, true
			}
		}
		return runs.ToolCall{}, false
	}
	var last *runs.ToolCall
	for i := len(calls) - 1; i >= 0; i-- {
		c := calls[i]
		if c.Tool == issues.ToolName {
			continue
		}
		if c.Outcome != runs.OutcomeOK {
			return c, true
		}
		if last == nil {
			last = &calls[i]
		}
	}
	if last == nil {
		return runs.ToolCall{}, false
	}
	return *last, true
}

// explain fills the tool, its walk and its login from the run's snapshot.
func (v *View) explain(ctx context.Context, db store.DB, p access.Principal, r runs.Run) error {
	snap, err := runs.SnapshotOf(ctx, db, r.ID)
	if errors.Is(err, store.ErrNotFound) {
		v.Missing = "the run kept no record of what it offered"
		return nil
	} else if err != nil {
		return err
	}
	offered, ok := snap.Tool(v.Call.Tool)
	if !ok {
		v.Missing = "the run did not offer " + v.Call.Tool + ": the call was refused before anything ran"
		v.WhyNot = "the tool was not offered to the run"
		return nil
	}
	v.Tool = &Tool{Name: offered.Name, Kind: offered.Kind, Description: offered.Description, Schema: offered.Schema,
		ServerSlug: offered.ServerSlug, RemoteName: offered.RemoteName}
	serverID := ""
	if offered.ServerSlug != "" && offered.Kind == "mcp" {
		err := db.QueryRow(ctx, `SELECT id, name, auth FROM mcp_servers WHERE slug = $1`, offered.ServerSlug).
			Scan(&serverID, &v.Tool.ServerName, &v.Tool.ServerAuth)
		if err != nil && !errors.Is(store.Map(err), store.ErrNotFound) {
			return store.Map(err)
		}
	}
	if offered.Kind == "mcp" && serverID == "" {
		v.WhyNot = "the tool's server is no longer in the catalog"
		return nil
	}
	walk, err := grants.WalkTool(ctx, db, r.AgentID, serverID, offered.Name)
	if errors.Is(err, store.ErrNotFound) {
		v.WhyNot = "the agent no longer exists"
		return nil
	} else if err != nil {
		return err
	}
	v.Walk = &walk
	if offered.Kind != "mcp" {
		v.WhyNot = "Test calls a login's tools; " + offered.Name + " is a platform tool"
		return nil
	}
	loginID := offered.ConnectionID
	if loginID == "" {
		loginID = walk.Login
	}
	if loginID == "" {
		v.WhyNot = "no login serves " + v.Tool.ServerName + " for this agent"
		return nil
	}
	login, err := connections.GetConnection(ctx, db, p, loginID)
	if errors.Is(err, store.ErrNotFound) {
		v.WhyNot = "the login that served the call was removed"
		return nil
	} else if err != nil {
		return err
	}
	v.Login = &login
	switch {
	case login.Status != connections.StatusConnected:
		v.WhyNot = "the login is " + string(login.Status) + ": reconnect it first"
	case login.OwnerScope == grants.ScopePlatform && !p.Admin:
		v.WhyNot = "the login is the platform's: only an instance admin may call with it"
	default:
		v.Testable = true
	}
	return nil
}
