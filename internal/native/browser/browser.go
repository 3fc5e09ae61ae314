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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

// Proxy is the platform's forward proxy (internal/browserproxy): Open makes
// sure the agent's socket listens, and returns its path as the sandbox
// sees it.
type Proxy interface {
	Open(agentID string) (string, error)
}

// ExecTimeout bounds the helper's exec: the spec's 60 s per call, less a
// little for the activity to record the result. The helper stops its own
// work at browserops.CallTimeout, before this.
const ExecTimeout = 57 * time.Second

// Deps are what the browser tools need.
type Deps struct {
	// Workspace runs the helper; nil makes every call fail with
	// sandbox.ErrNoWorkspace.
	Workspace sandbox.Workspace
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

// Register adds the eight browser tools to reg.
func Register(reg *tools.Registry, d Deps) {
	if d.Helper == "" {
		d.Helper = browserproto.HelperPath
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.order = &sequencer{}
	for _, t := range decls {
		reg.Register(tools.Tool{Name: t.name, Description: t.description, Schema: json.RawMessage(t.schema),
			Handler: d.handler(t.name), Class: tools.ClassBrowser, Idempotent: t.idempotent})
	}
}

func (d Deps) handler(tool string) tools.Handler {
	return func(ctx context.Context, call tools.Call) (string, error) {
		if d.Workspace == nil {
			return "", sandbox.ErrNoWorkspace
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
	return helper.Call[browserproto.Request, browserproto.Response](ctx, d.Workspace, agentID, req, helper.Options{
		Binary: d.Helper, Helper: "browser helper", What: req.Tool, Timeout: ExecTimeout})
}

// startBrowser starts Chromium in the agent's sandbox as the browser's
// uid, never the agent's.
func (d Deps) startBrowser(ctx context.Context, agentID, user string, proxy bool) error {
	cmd := []string{d.Helper, browserproto.StartArg}
	if proxy {
		cmd = append(cmd, browserproto.ProxyArg)
	}
	res, err := d.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: cmd, User: user, Timeout: ExecTimeout, MaxOutput: helper.DefaultMaxOutput,
		Dir: "/", Env: map[string]string{"HOME": browserproto.BrowserHome}})
	if err != nil {
		return fmt.Errorf("start the browser in the workspace: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("the browser did not start (exit %d)%s", res.ExitCode, helper.StderrTail(res.Stderr))
	}
	return nil
}
