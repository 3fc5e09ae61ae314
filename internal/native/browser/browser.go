// Package browser is the orchestrator side of the eight browser tools
// (browser_navigate, browser_snapshot, browser_click, browser_type,
// browser_fill, browser_scroll, browser_screenshot, browser_eval). Every
// call becomes one browserproto.Request run by guilds-browser inside the
// agent's workspace, against the Chromium kept running there; the helper's
// text is the result and its metadata fields are recorded with the call.
// The run offers these tools only when the agent's browser flag is set
// (grants.GateBrowser).
package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// Workspace is what the browser tools need from an agent's long-lived
// sandbox (internal/workspaces.Manager).
type Workspace interface {
	Exec(ctx context.Context, agentID string, req sandbox.ExecRequest) (sandbox.ExecResult, error)
	CopyTo(ctx context.Context, agentID, path string, content []byte, mode fs.FileMode) error
}

// Proxy is the platform's forward proxy (internal/browserproxy): Open makes
// sure the agent's socket listens, and returns its path as the sandbox
// sees it.
type Proxy interface {
	Open(agentID string) (string, error)
}

// ErrNoWorkspace is the failure of a call in a process that has no
// workspace (the API server declares the tools for offers and views only).
var ErrNoWorkspace = errors.New("this process has no agent workspace; browser tools run on the worker")

// ExecTimeout bounds the helper's exec: the spec's 60 s per call, less a
// little for the activity to record the result. The helper stops its own
// work at browserops.CallTimeout, before this.
const ExecTimeout = 57 * time.Second

// maxHelperOutput caps what is read of the helper's output.
const maxHelperOutput = 1 << 20

// Deps are what the browser tools need.
type Deps struct {
	// Workspace runs the helper; nil makes every call fail with ErrNoWorkspace.
	Workspace Workspace
	// Proxy gives Chromium its way out; nil = no proxy (a sandbox with a
	// network of its own, or development).
	Proxy Proxy
	// DB reads a call's turn, so its browser calls run in the order the
	// model listed them; nil = a short wait for the turn's calls to gather.
	DB store.DB
	// Helper is the helper's path in the sandbox; empty = browserproto.HelperPath.
	Helper string
	// MaxResultBytes caps a result's text; 0 = browserproto.DefaultResultMaxBytes.
	MaxResultBytes int
	// BrowserUser, when set, says which uid Chromium runs as in the
	// sandbox (sandbox.BrowserUser on a container driver): the helper then
	// never starts it as the agent's uid, and a call starts it as this one
	// first. nil or "" = the helper starts it itself (the local driver).
	BrowserUser func() string
	Log         *slog.Logger

	order *sequencer // one call at a time per agent, a turn's in its order
}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "browser", Group: "Browser", Gate: tools.GateBrowser}

// Register adds the eight browser tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	if d.Helper == "" {
		d.Helper = browserproto.HelperPath
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.order = &sequencer{}
	for _, t := range decls {
		fam.Register(tools.Tool{Name: t.name, Description: t.description, Schema: json.RawMessage(t.schema),
			Handler: d.handler(t.name), Class: tools.ClassBrowser, Idempotent: t.idempotent})
	}
}

func (d Deps) handler(tool string) tools.Handler {
	return func(ctx context.Context, call tools.Call) (string, error) {
		if d.Workspace == nil {
			return "", ErrNoWorkspace
		}
		if call.AgentID == "" {
			return "", fmt.Errorf("%s runs in an agent's workspace: this call has no agent id", tool)
		}
		release, err := d.order.acquire(ctx, call.AgentID, call.RunID, call.Seq, earlierSiblings(ctx, d.DB, call))
		if err != nil {
			return "", fmt.Errorf("%s waited for the agent's other browser calls: %w", tool, err)
		}
		defer release()
		req := browserproto.Request{Tool: tool, Args: call.Args, RunID: call.RunID, AgentID: call.AgentID, MaxBytes: d.MaxResultBytes}
		user := ""
		if d.BrowserUser != nil {
			user = d.BrowserUser()
		}
		req.SeparateBrowser = user != ""
		if d.Proxy != nil {
			sock, err := d.Proxy.Open(call.AgentID)
			if err != nil {
				return "", fmt.Errorf("the browser's network proxy: %w", err)
			}
			req.ProxySocket = sock
		}
		resp, err := d.run(ctx, call.AgentID, req)
		if err == nil && resp.StartBrowser {
			if err := d.startBrowser(ctx, call.AgentID, user, req.ProxySocket != ""); err != nil {
				return "", err
			}
			resp, err = d.run(ctx, call.AgentID, req)
			if err == nil && resp.StartBrowser {
				return "", errors.New("the browser was started but does not answer")
			}
		}
		if err != nil {
			return "", err
		}
		for k, v := range resp.Meta {
			tools.SetMetadata(ctx, k, v)
		}
		return resp.Text, nil
	}
}

// run passes one request to the helper and decodes its answer.
func (d Deps) run(ctx context.Context, agentID string, req browserproto.Request) (browserproto.Response, error) {
	var none browserproto.Response
	arg, err := browserproto.Encode(req)
	if err != nil {
		return none, fmt.Errorf("encode the %s request: %w", req.Tool, err)
	}
	if len(arg) > browserproto.MaxArgBytes {
		if arg, err = d.writeRequest(ctx, agentID, req); err != nil {
			return none, err
		}
	}
	res, err := d.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: []string{d.Helper, arg}, Timeout: ExecTimeout, MaxOutput: maxHelperOutput})
	if errors.Is(err, ErrNoWorkspace) {
		return none, ErrNoWorkspace
	}
	if err != nil {
		return none, fmt.Errorf("run %s in the workspace: %w", req.Tool, err)
	}
	if res.TimedOut {
		return none, fmt.Errorf("%s did not finish within %s", req.Tool, ExecTimeout)
	}
	if res.ExitCode != 0 {
		return none, fmt.Errorf("the browser helper failed (exit %d)%s", res.ExitCode, code.StderrTail(res.Stderr))
	}
	if res.Truncated {
		return none, errors.New("the browser helper's answer was too long")
	}
	resp, err := browserproto.DecodeResponse(res.Stdout)
	if err != nil {
		return none, fmt.Errorf("the browser helper's answer: %w", err)
	}
	return resp, nil
}

// startBrowser starts Chromium in the agent's sandbox as the browser's
// uid, never the agent's.
func (d Deps) startBrowser(ctx context.Context, agentID, user string, proxy bool) error {
	cmd := []string{d.Helper, browserproto.StartArg}
	if proxy {
		cmd = append(cmd, browserproto.ProxyArg)
	}
	res, err := d.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: cmd, User: user, Timeout: ExecTimeout, MaxOutput: maxHelperOutput,
		Dir: "/", Env: map[string]string{"HOME": browserproto.BrowserHome}})
	if err != nil {
		return fmt.Errorf("start the browser in the workspace: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("the browser did not start (exit %d)%s", res.ExitCode, code.StderrTail(res.Stderr))
	}
	return nil
}

// writeRequest writes a request too long for the command line through the
// sandbox file API and returns the helper's argument that names it.
func (d Deps) writeRequest(ctx context.Context, agentID string, req browserproto.Request) (string, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("encode the %s request: %w", req.Tool, err)
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	p := path.Join(browserproto.RequestDir, hex.EncodeToString(b[:])+".json")
	if err := d.Workspace.CopyTo(ctx, agentID, p, raw, 0o600); errors.Is(err, ErrNoWorkspace) {
		return "", ErrNoWorkspace
	} else if err != nil {
		return "", fmt.Errorf("write the %s request into the workspace: %w", req.Tool, err)
	}
	return "@" + p, nil
}
