// Package run holds the activities of the run workflow: snapshot (what the
// run offers), model (one model turn), tool (one tool call through the result
// pipeline), tool_record (a result the workflow decides without running the
// tool) and finish. They load what they need from Postgres themselves, so
// only ids, model text and stamped results cross into the workflow history.
package run

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/workspacefiles"
)

// Activity names, stable across Go renames.
const (
	SnapshotName   = "snapshot"
	ModelName      = "model"
	ToolName       = "tool"
	ToolRecordName = "tool_record"
	FinishName     = "finish"
)

// Offer is what the grants resolution offers a run (mirrors grants.Offer).
type Offer struct {
	Tools    []OfferedTool
	Warnings []string
	Memory   bool
}

// OfferedTool is one tool of an offer (mirrors grants.OfferedTool).
type OfferedTool struct {
	Name, Kind, Description string // Kind: "native" | "mcp"
	Schema, ShapedSchema    json.RawMessage
	ConnectionID            string
	ServerSlug              string
	RemoteName              string
	Class                   tools.Class
	Idempotent              bool
}

// Offerer resolves what an agent's run offers. internal/grants implements it
// (see grants_adapter.go); NativeOfferer stands in until it does.
type Offerer interface {
	Offered(ctx context.Context, db store.DB, agentID string, trigger string) (Offer, error)
}

// MCPCaller calls a remote MCP tool on a connection's session (internal/mcppool).
// It resolves the connection's credential itself.
type MCPCaller interface {
	Call(ctx context.Context, connectionID, remoteName string, args json.RawMessage) (string, error)
}

// SecretSource gives the values a run's tool results are redacted against
// (the connectors engine: every credential the agent's connections hold).
type SecretSource interface {
	RunSecrets(ctx context.Context, agentID string) ([]string, error)
}

// ArgumentVault keeps the arguments of some tools (secret_store, whose
// value is a secret) out of the workflow: the model activity seals them
// (Hide) before it stores and returns the model's answer, which then holds
// only the shown form, and the tool activity opens them again (Reveal).
// internal/agentsecrets.Vault implements it; see docs/adr/0901-agent-secrets.md.
type ArgumentVault interface {
	Sealed(tool string) bool
	Hide(ctx context.Context, runID string, seq int, callID, args string) (shown string, hidden []string, err error)
	Reveal(ctx context.Context, runID string, seq int, callID string) (args string, hidden []string, ok bool, err error)
	Forget(ctx context.Context, runID string, seq int) error
}

// StartRefusedError is returned by an Offerer when the run must not start,
// such as an enabled MCP server whose connection is disconnected.
type StartRefusedError struct{ Reason string }

func (e *StartRefusedError) Error() string { return e.Reason }

// Deps are the activities' dependencies; main builds them.
type Deps struct {
	DB      *pgxpool.Pool
	Tools   *tools.Registry
	Offerer Offerer // nil means NativeOfferer over Tools
	MCP     MCPCaller
	// Adapters calls a local adapter's tool (internal/adapters/host); the
	// offer's class routes a call here or to MCP.
	Adapters MCPCaller
	Secrets  SecretSource
	// Vault seals the arguments of tools whose arguments are secrets; nil
	// leaves every argument as the model sent it.
	Vault ArgumentVault
	// Keyring seals the state of a tool call held for a person's input
	// (internal/inputs.Holder); nil: such a call waits in its activity.
	Keyring *secret.Keyring
	Models  *models.Resolver
	Log     *slog.Logger
	// Credentials and HTTP quote a Pinned prices login's coins at run start
	// (the connectors resolver, the platform's outbound client); without
	// Credentials the section says the prices are unavailable.
	Credentials CredentialSource
	HTTP        *http.Client
	// Heartbeat is how often a running tool call or model turn heartbeats;
	// 0 means 2 s.
	Heartbeat time.Duration
	// Repositories prepares a coding generation's GitHub repositories at
	// its start (github.go); nil prepares none.
	Repositories Repositories
	// Approvals says which calls wait for a person (approval.go); nil: none.
	Approvals ApprovalGate
	// Files are the agents' workspaces as the adapters that move files
	// between a workspace and a service see them (workspacefiles); nil
	// fails those calls with sandbox.ErrNoWorkspace.
	Files workspacefiles.Workspace
	// Breaker pauses a login whose service failed several calls in a row
	// (breaker.go); nil: none is paused.
	Breaker *breaker.Breaker
	// CallRate holds each organisation to its rate of tool calls
	// (ratelimit.go); nil: no rate is enforced.
	CallRate *callrate.Limiter
}

// Activities are the run workflow's activities.
type Activities struct {
	d     Deps
	snaps snapshotCache
}

// New builds the activities.
func New(d Deps) *Activities {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Tools == nil {
		// A registry of our own still offers report_issue, which every run has.
		d.Tools = tools.NewRegistry(tools.WithLogger(d.Log))
		issues.Register(d.Tools, d.DB)
	}
	if d.Offerer == nil {
		d.Offerer = NativeOfferer{Tools: d.Tools}
	}
	if d.Heartbeat <= 0 {
		d.Heartbeat = 2 * time.Second
	}
	return &Activities{d: d}
}

// NativeOfferer offers every native tool of a registry. It knows no bindings
// and no MCP servers: it stands in where internal/grants is not wired.
type NativeOfferer struct{ Tools *tools.Registry }

// Offered implements Offerer.
func (o NativeOfferer) Offered(ctx context.Context, db store.DB, agentID, trigger string) (Offer, error) {
	var out Offer
	for _, off := range o.Tools.Offers() {
		t, _ := o.Tools.Lookup(off.Name)
		out.Tools = append(out.Tools, OfferedTool{Name: off.Name, Kind: "native", Description: off.Description,
			Schema: off.Schema, ShapedSchema: off.Shaped, Class: t.Class, Idempotent: t.Idempotent})
	}
	return out, nil
}
