package remote

import (
	"context"
	"log/slog"
	"strings"

	"github.com/guilds/guilds/internal/tools"
)

// AppReader reads an MCP App's page through a login (mcppool.Pool.ReadApp):
// resources/read on the login's session, redacted of the values it injected
// and checked for type and size.
type AppReader interface {
	ReadApp(ctx context.Context, connectionID, uri string) (tools.App, error)
}

// KeepApp keeps the i-th app (from 1) of a call's result, its page already
// redacted with the caller's set, and returns where it was kept, as the
// model reads it.
type KeepApp func(ctx context.Context, i int, app tools.App) (string, error)

// MaxAppsPerResult bounds the pages one result may have read and kept; the
// others are only named.
const MaxAppsPerResult = 4

// keepApps gives each app of parts its outcome (docs/adr/0620): the tool's
// declared page is added when the result does not already carry it; each
// page is read when the result only linked it, redacted with opt.Redactor,
// and kept with opt.Keep. The model reads one line per app, never the page.
func keepApps(ctx context.Context, pool Caller, t Tool, parts []tools.Part, opt Options, log *slog.Logger) []tools.Part {
	parts = withDeclared(parts, t.UIResource)
	n := 0
	for _, p := range parts {
		a := p.App
		if a == nil {
			continue
		}
		n++
		switch {
		case opt.KeepApp == nil:
			a.Drop("only a run keeps apps")
			continue
		case n > MaxAppsPerResult:
			a.Drop("a result keeps at most 4 apps")
			continue
		case a.Dropped != "":
			continue
		}
		if !a.Read {
			read, ok := readApp(ctx, pool, t.ConnectionID, a.URI, opt.Redactor)
			*a = read
			if !ok {
				continue
			}
		}
		a.HTML = opt.Redactor.Redact(a.HTML)
		if len(a.HTML) > tools.MaxAppBytes {
			a.Drop("larger than the " + tools.HumanBytes(tools.MaxAppBytes) + " limit once redacted")
			continue
		}
		where, err := opt.KeepApp(ctx, n, *a)
		if err != nil {
			log.WarnContext(ctx, "a result app could not be kept", "connection_id", t.ConnectionID, "remote_tool", t.RemoteName, "err", err)
			a.Drop("it could not be stored")
			continue
		}
		a.Kept, a.HTML = where, ""
	}
	return parts
}

// withDeclared adds the tool's declared page after the result's parts,
// unless a part already is that page or the result is a failure (the pool
// gives a tool's error as one "ERROR: " text).
func withDeclared(parts []tools.Part, uri string) []tools.Part {
	if uri == "" || (len(parts) > 0 && strings.HasPrefix(parts[0].Text, "ERROR: ")) {
		return parts
	}
	for _, p := range parts {
		if p.App != nil && p.App.URI == uri {
			return parts
		}
	}
	return append(parts, tools.Part{App: &tools.App{URI: uri}})
}

// readApp reads a linked or declared page; ok is false when it could not be
// read or fails a check, the app then saying why.
func readApp(ctx context.Context, pool Caller, connectionID, uri string, red *tools.Redactor) (tools.App, bool) {
	r, can := pool.(AppReader)
	if !can {
		return tools.App{URI: uri, Dropped: "this worker cannot read apps"}, false
	}
	a, err := r.ReadApp(ctx, connectionID, uri)
	if err != nil {
		msg := red.Redact(err.Error())
		if len(msg) > 300 {
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
		return tools.App{URI: uri, Dropped: "it could not be read: " + msg}, false
	}
	return a, a.Dropped == ""
}
