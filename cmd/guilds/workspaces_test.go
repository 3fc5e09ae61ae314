package main

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/native/browser"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// The worker fills the code tools' workspace slot and empties it at stop;
// serve never fills it, so a call there says where code tools run.
func TestWorkerWorkspacesServeTheCodeTools(t *testing.T) {
	helper := filepath.Join(t.TempDir(), "guilds-code")
	if out, err := exec.Command("go", "build", "-o", helper, "github.com/guilds/guilds/cmd/guilds-code").CombinedOutput(); err != nil {
		t.Fatalf("build guilds-code: %v\n%s", err, out)
	}
	cfg := config.Config{DataDir: t.TempDir(), Sandbox: config.Sandbox{Driver: config.SandboxLocal, AllowLocal: true, Scope: "cmd-test"}}
	p := &platform{cfg: cfg, env: environment{"CODE_RESULT_MAX_BYTES": "4096"}, log: slog.New(slog.DiscardHandler)}
	reg := native.Registry(nil, p.log, p.codeOptions()...)
	call := func() string {
		return reg.Invoke(context.Background(), tools.Call{Name: code.ToolShell, Args: []byte(`{"command":"echo hi; env"}`),
			RunID: "run-1", AgentID: "agent-1", Seq: 3, CallID: "c1"})
	}
	if got := call(); got != tools.ErrorResult(sandbox.ErrNoWorkspace.Error()) {
		t.Fatalf("before the worker started its workspaces: %q", got)
	}

	stop, err := p.startWorkspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.workspace.helper = helper // the local driver runs the host's helper; none sits beside the test binary
	got := call()
	if !strings.HasPrefix(got, "hi\n") || !strings.Contains(got, "GUILD_AGENT_ID=agent-1") {
		t.Fatalf("through the worker's workspaces: %q", got)
	}
	stop()
	if got := call(); got != tools.ErrorResult(sandbox.ErrNoWorkspace.Error()) {
		t.Fatalf("after the worker stopped: %q", got)
	}
}

// The local driver isolates nothing: the worker refuses it unless allowed.
func TestWorkerRefusesTheLocalDriverUnlessAllowed(t *testing.T) {
	p := &platform{cfg: config.Config{DataDir: t.TempDir(), Sandbox: config.Sandbox{Driver: config.SandboxLocal}},
		env: environment{}, log: slog.New(slog.DiscardHandler)}
	if _, err := p.startWorkspaces(context.Background()); err == nil || !strings.Contains(err.Error(), "GUILDS_SANDBOX_ALLOW_LOCAL=1") {
		t.Fatalf("got %v", err)
	}
}

// Outside the worker every sandbox tool answers the one "no workspace"
// error, whichever package it lives in: the browser and script tools
// recognise the error the worker's empty slot returns.
func TestEveryToolRecognisesTheEmptySlot(t *testing.T) {
	p := &platform{env: environment{}, log: slog.New(slog.DiscardHandler)}
	reg := native.Registry(nil, p.log, p.codeOptions()...)
	for _, c := range []tools.Call{
		{Name: code.ToolShell, Args: []byte(`{"command":"true"}`)},
		{Name: browser.ToolSnapshot, Args: []byte(`{}`)},
	} {
		c.RunID, c.AgentID, c.CallID = "run-1", "agent-1", "c1"
		if got := reg.Invoke(context.Background(), c); got != tools.ErrorResult(noWorkspace.Error()) {
			t.Errorf("%s outside the worker: %q", c.Name, got)
		}
	}
}

var noWorkspace = sandbox.ErrNoWorkspace
