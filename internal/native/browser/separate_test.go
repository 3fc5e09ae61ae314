package browser_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/native/browser"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

// helperWorkspace plays guilds-browser in a sandbox whose Chromium runs
// as its own uid: a call answers StartBrowser until a start ran as that
// uid, then "ok".
type helperWorkspace struct {
	mu      sync.Mutex
	execs   []sandbox.ExecRequest
	started bool
	modes   []fs.FileMode
}

func (w *helperWorkspace) Exec(_ context.Context, _ string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.execs = append(w.execs, req)
	if slices.Contains(req.Cmd, browserproto.StartArg) {
		w.started = req.User == sandbox.BrowserUser
		return sandbox.ExecResult{}, nil
	}
	resp := browserproto.Response{Text: "ok"}
	if !w.started {
		resp = browserproto.Response{StartBrowser: true}
	}
	out, _ := helper.Encode(resp)
	return sandbox.ExecResult{Stdout: []byte(out + "\n")}, nil
}

func (w *helperWorkspace) CopyTo(_ context.Context, _, _ string, _ []byte, mode fs.FileMode) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.modes = append(w.modes, mode)
	return nil
}

// In a container sandbox Chromium is started by an exec as the browser's
// own uid, never by the helper running as the agent's; the helper's
// request says so, and a long request's file is the agent's alone (0600).
func TestChromiumStartsAsItsOwnUser(t *testing.T) {
	ws := &helperWorkspace{}
	reg := tools.NewRegistry()
	browser.Register(reg, browser.Deps{Workspace: ws, BrowserUser: func() string { return sandbox.BrowserUser }})
	long, _ := json.Marshal(map[string]any{"script": "return 1 // " + strings.Repeat("x", helper.MaxArgBytes)})
	for _, args := range []json.RawMessage{json.RawMessage(`{"script":"return 1"}`), long} {
		if got := reg.Invoke(context.Background(), tools.Call{Name: browser.ToolEval, Args: args, AgentID: "a1", RunID: "r1"}); got != "ok" {
			t.Fatalf("call: %q", got)
		}
	}
	var starts []sandbox.ExecRequest
	for _, e := range ws.execs {
		if slices.Contains(e.Cmd, browserproto.StartArg) {
			starts = append(starts, e)
			continue
		}
		if e.User != "" {
			t.Errorf("the helper ran as %q", e.User)
		}
		if arg := e.Cmd[len(e.Cmd)-1]; !strings.HasPrefix(arg, "@") {
			req, err := helper.Decode[browserproto.Request]([]byte(arg))
			if err != nil || !req.SeparateBrowser {
				t.Errorf("request %+v %v", req, err)
			}
		}
	}
	if len(starts) != 1 || starts[0].User != sandbox.BrowserUser || starts[0].Env["HOME"] != browserproto.BrowserHome {
		t.Fatalf("starts %+v", starts)
	}
	if !slices.Equal(ws.modes, []fs.FileMode{0o600}) {
		t.Fatalf("request file modes %v", ws.modes)
	}
}
