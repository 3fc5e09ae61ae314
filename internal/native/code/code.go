// Package code is the orchestrator side of the eleven code tools (shell,
// shell_status, file_read, file_edit, file_write, code_search, code_match,
// code_map, code_find, code_outline, code_callers). Every call becomes one
// codeproto.Request run by guilds-code inside the agent's workspace; the
// helper's shaped text is the result and its metadata fields are recorded
// with the call. The orchestrator never opens a workspace file itself.
package code

import (
	"context"
	"log/slog"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// HelperLocator is implemented by a workspace that runs the helper from
// somewhere other than codeproto.HelperPath (the local development driver,
// whose sandboxes are host directories, runs the host's build of it); an
// empty answer keeps Deps.Helper.
type HelperLocator interface {
	CodeHelper() string
}

// ShellPreparer is implemented by a workspace with work to do before each
// shell call of an agent (the GitHub tokens of its generation, replaced
// when close to their expiry); an error fails the call.
type ShellPreparer interface {
	BeforeShell(ctx context.Context, agentID string) error
}

// Deps are what the code tools need.
type Deps struct {
	// Workspace runs the helper; nil makes every call fail with
	// sandbox.ErrNoWorkspace.
	Workspace sandbox.Workspace
	// DB reads the run's earlier file_read calls (no repeated reads).
	DB store.DB
	// Helper is the helper's path in the sandbox; empty = codeproto.HelperPath.
	Helper string
	// MaxResultBytes caps a result's text (CODE_RESULT_MAX_BYTES); 0 = the
	// helper's default, codeproto.DefaultResultMaxBytes.
	MaxResultBytes int
	// Env gives the agent's granted secrets, which become environment
	// variables of its shell commands; nil gives none.
	Env EnvSource
	Log *slog.Logger
}

// EnvSource gives the environment variables an agent's shell commands get
// besides the fixed ones: its granted secrets (internal/agentsecrets.Source).
type EnvSource interface {
	Env(ctx context.Context, call tools.Call) (map[string]string, error)
}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "code", Group: "Code", Gate: tools.GateCoding}

// Register adds the eleven code tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	if d.Helper == "" {
		d.Helper = codeproto.HelperPath
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	for _, t := range decls {
		fam.Register(t.tool(d.handler(t.name)))
	}
}
