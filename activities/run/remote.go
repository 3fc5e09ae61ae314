package run

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// callRemote sends a remote or adapter tool's call down the one remote call
// path (internal/remote), redacted with the run's set, and returns the
// stamped result and its outcome.
// Images the result holds are kept in run_images at the call's seq; the
// model activity reads them from there. MCP Apps pages the tool declares or
// the result carries are kept in run_apps, for the operator only.
func (a *Activities) callRemote(ctx context.Context, r runs.Run, seq int, t runs.OfferedTool, args json.RawMessage, remaining int, red *tools.Redactor) (string, string) {
	gate, why := a.loginGate(ctx, t)
	if why != "" {
		log := a.d.Log.With("run_id", r.ID, "tool", t.Name)
		return tools.Stamp(tools.ErrorResult(why), tools.StampOptions{Redactor: red, Remaining: remaining, Log: log}), runs.OutcomeRefused
	}
	callers, tool, opts := a.remoteCall(ctx, r, seq, t, remaining, red)
	ctx = inputs.WithAsker(ctx, a.askerFor(r, seq, t))
	out, err := remote.Call(ctx, callers, tool, args, opts)
	a.countCall(ctx, t, gate, err)
	if timedOut(err) {
		return out, runs.OutcomeTimedOut
	}
	if err != nil {
		return out, runs.OutcomeError
	}
	return out, outcomeOf(out)
}

// timedOut: the service did not answer within the call's bound (the pool's
// or the adapter host's own timeout), told apart from a failure in the
// audit trail and the Tools view.
func timedOut(err error) bool {
	var (
		mt *mcppool.TimeoutError
		ht *host.TimeoutError
	)
	return errors.As(err, &mt) || errors.As(err, &ht)
}

// remoteCall is what the remote call path needs for a run's call of t: the
// callers, the tool as the login listed it, and the run's options.
func (a *Activities) remoteCall(ctx context.Context, r runs.Run, seq int, t runs.OfferedTool, remaining int, red *tools.Redactor) (remote.Callers, remote.Tool, remote.Options) {
	keep := func(ctx context.Context, i int, im tools.Image) (string, error) {
		if err := runs.SaveImage(ctx, a.d.DB, r.ID, runs.Image{Seq: seq, Idx: i, MediaType: im.MediaType, Data: im.Data}); err != nil {
			return "", err
		}
		return runs.ImageRef(seq, i), nil
	}
	keepApp := func(ctx context.Context, i int, app tools.App) (string, error) {
		if err := runs.SaveApp(ctx, a.d.DB, r.ID, runs.App{Seq: seq, Idx: i, URI: app.URI, MediaType: app.MediaType, HTML: app.HTML}); err != nil {
			return "", err
		}
		return runs.AppRef(seq, i), nil
	}
	log := a.d.Log.With("run_id", r.ID, "tool", t.Name)
	ui, err := grants.ToolUI(ctx, a.d.DB, t.ConnectionID, t.RemoteName)
	if err != nil { // the call goes on; only its app is not shown
		log.WarnContext(ctx, "the tool's app could not be looked up", "err", err)
	}
	return remote.Callers{MCP: a.d.MCP, Adapters: a.d.Adapters},
		remote.Tool{Kind: kindOf(t), ConnectionID: t.ConnectionID, RemoteName: t.RemoteName, Schema: t.Schema, UIResource: ui},
		remote.Options{Redactor: red, Remaining: remaining, Log: log, Keep: keep, KeepApp: keepApp}
}

// kindOf is the catalog kind of an offered tool's login: the offer classes
// an adapter's tools as such (grants.Offered), and a snapshot stores that
// class, so a run started before a deploy routes the same way.
func kindOf(t runs.OfferedTool) catalog.Kind {
	if tools.Class(t.Class) == tools.ClassAdapter {
		return catalog.KindAdapter
	}
	return catalog.KindRemote
}
