// Package scripts is the script tool family: small Python programs an agent
// keeps (agent-level artifacts of kind script, with an optional parameters
// JSON Schema) and runs in its sandbox. A run snapshots each script's source
// and hash when it starts (run_scripts), so a script runs the same for the
// rest of the run whatever happens to its row; script_run materialises the
// snapshot's source at /home/agent/scripts/<name>.py through the sandbox
// file API and runs it with guilds-script-run. A script with parameters is
// also offered as a tool of its own on the runs that follow (OfferedTools).
package scripts

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/scripts/runproto"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// Tool names.
const (
	ToolCreate = "script_create"
	ToolList   = "script_list"
	ToolRead   = "script_read"
	ToolRun    = "script_run"
	ToolDelete = "script_delete"
)

// Names lists the script tools in the catalog's order.
var Names = []string{ToolCreate, ToolList, ToolRead, ToolRun, ToolDelete}

// RunClass is the timeout class of script_run and of a script offered as a
// tool: the script's own 120 s, the helper's report and the sandbox start
// must fit in the activity, which the shell class allows.
const RunClass = tools.ClassShell

// execMargin covers the helper stopping a script at its timeout (SIGTERM,
// SIGKILL two seconds later) and reporting back.
const execMargin = 10 * time.Second

// EnvSource gives an agent's granted secrets, which become environment
// variables of its scripts as of its shell commands.
type EnvSource interface {
	Env(ctx context.Context, call tools.Call) (map[string]string, error)
}

// Deps are what the script tools need.
type Deps struct {
	DB *pgxpool.Pool
	// Workspace runs scripts; nil makes script_run fail with
	// sandbox.ErrNoWorkspace
	// (and script_create and script_delete leave the sandbox alone).
	Workspace sandbox.Workspace
	// Env gives the agent's granted secrets; nil gives none.
	Env EnvSource
	// Helper is the helper's path in the sandbox; empty = runproto.HelperPath.
	Helper string
	// MaxResultBytes caps a result's text; 0 = the helper's default.
	MaxResultBytes int
	// Timeout shortens a script's runproto.Timeout (tests); 0 keeps it.
	Timeout time.Duration
	Log     *slog.Logger
}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "scripts", Group: "Scripts", Gate: tools.GateBinding, Flag: "scripting"}

// Register adds the five script tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	if d.Helper == "" {
		d.Helper = runproto.HelperPath
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	h := &handlers{d: d}
	for _, t := range h.decls() {
		fam.Register(t)
	}
}
