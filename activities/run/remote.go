package run

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// callRemote sends a remote or adapter tool's call down the one remote call
// path (internal/remote), redacted with the run's set, and returns the
// stamped result and its outcome.
// Images the result holds are kept in run_images at the call's seq; the
// model activity reads them from there.
func (a *Activities) callRemote(ctx context.Context, r runs.Run, seq int, t runs.OfferedTool, args json.RawMessage, remaining int, red *tools.Redactor) (string, string) {
	keep := func(ctx context.Context, i int, im tools.Image) (string, error) {
		if err := runs.SaveImage(ctx, a.d.DB, r.ID, runs.Image{Seq: seq, Idx: i, MediaType: im.MediaType, Data: im.Data}); err != nil {
			return "", err
		}
		return runs.ImageRef(seq, i), nil
	}
	out, err := remote.Call(ctx, remote.Callers{MCP: a.d.MCP, Adapters: a.d.Adapters}, remote.Tool{Kind: kindOf(t),
		ConnectionID: t.ConnectionID, RemoteName: t.RemoteName, Schema: t.Schema}, args,
		remote.Options{Redactor: red, Remaining: remaining, Log: a.d.Log.With("run_id", r.ID, "tool", t.Name), Keep: keep})
	if err != nil {
		return out, runs.OutcomeError
	}
	return out, outcomeOf(out)
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
