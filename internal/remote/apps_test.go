package remote_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// chartPage is the app page of the chart tool; it holds the login's key and
// a run secret, as a careless server might.
const chartPage = `<!doctype html><p>chart for ` + loginKey + ` and ` + runSecret + `</p><script>parent.postMessage("hi","*")</script>`

// appPeer is a real MCP server declaring MCP Apps pages, behind a bearer
// check, connected as a login through the production engine and pool.
type appPeer struct {
	pool      *mcppool.Pool
	db        store.DB
	conn      string
	reads     atomic.Int64 // resources/read requests that reached the server
	mu        sync.Mutex
	extension any // what the client announced for io.modelcontextprotocol/ui
}

func newAppPeer(t *testing.T) *appPeer {
	t.Helper()
	ctx := context.Background()
	p := &appPeer{}
	// The server lists the Apps extension: on the 2026-07-28 wire the
	// platform declares an extension only to a server that lists it (ADR 0627).
	s := server.NewMCPServer("apps", "1.0.0", server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false),
		server.WithExtensions(map[string]any{tools.AppExtension: map[string]any{"mimeTypes": []string{tools.AppMediaType}}}))
	withUI := func(tool mcp.Tool, uri string) mcp.Tool {
		tool.Meta = mcp.NewMetaFromMap(map[string]any{"ui": map[string]any{"resourceUri": uri}})
		return tool
	}
	text := func(s string) server.ToolHandlerFunc {
		return func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
				p.mu.Lock()
				p.extension = cs.GetClientCapabilities().Extensions[tools.AppExtension]
				p.mu.Unlock()
			}
			return mcp.NewToolResultText(s), nil
		}
	}
	s.AddTool(withUI(mcp.NewTool("chart"), "ui://apps/chart"), text("3 points: 1, 2, 3"))
	// The older draft's key.
	old := mcp.NewTool("oldchart")
	old.Meta = mcp.NewMetaFromMap(map[string]any{"ui/resourceUri": "ui://apps/chart"})
	s.AddTool(old, text("the old way"))
	s.AddTool(withUI(mcp.NewTool("big"), "ui://apps/big"), text("a big one"))
	s.AddTool(withUI(mcp.NewTool("data"), "ui://apps/data"), text("data, not a page"))
	s.AddTool(withUI(mcp.NewTool("gone"), "ui://apps/gone"), text("its page is gone"))
	s.AddTool(mcp.NewTool("inline"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("inline fallback"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "ui://apps/inline", MIMEType: tools.AppMediaType, Text: "<p>inline " + runSecret + "</p>"}),
			mcp.NewResourceLink("ui://apps/chart", "chart", "", tools.AppMediaType),
		}}, nil
	})
	page := func(uri, mediaType, body string) {
		s.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType(mediaType)), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			p.reads.Add(1)
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mediaType, Text: body}}, nil
		})
	}
	page("ui://apps/chart", tools.AppMediaType, chartPage)
	page("ui://apps/big", tools.AppMediaType, "<p>"+strings.Repeat("x", tools.MaxAppBytes)+"</p>")
	page("ui://apps/data", "application/json", `{"not":"html"}`)
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+loginKey {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	p.pool = mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.pool.Close)
	var org, srv string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('apps', 'apps', 'remote', 'http', $1, 'token', '{"header":"Authorization","scheme":"Bearer"}') RETURNING id`,
		hs.URL).Scan(&srv); err != nil {
		t.Fatal(err)
	}
	p.conn = connectionstest.Insert(t, db, srv, "organisation", org)
	if _, err := eng.ConnectKey(ctx, uuid.MustParse(p.conn), map[string]string{"token": loginKey}); err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, db, p.conn, ""); err != nil {
		t.Fatal(err)
	}
	// The listing stores each tool's declared page, as a run start does.
	if _, err := p.pool.Sync(ctx, p.conn); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"chart": "ui://apps/chart", "oldchart": "ui://apps/chart", "inline": ""} {
		if got, err := grants.ToolUI(ctx, db, p.conn, name); err != nil || got != want {
			t.Fatalf("stored page of %s = %q, %v; want %q", name, got, err, want)
		}
	}
	p.db = db
	return p
}

// kept records what a run would keep.
type kept struct {
	mu   sync.Mutex
	apps map[int]tools.App
}

func (k *kept) keep(_ context.Context, i int, a tools.App) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.apps[i] = a
	return "run app 7." + string(rune('0'+i)), nil
}

func (p *appPeer) call(t *testing.T, name string, keepApps bool) (string, map[int]tools.App) {
	t.Helper()
	ctx := context.Background()
	ui, err := grants.ToolUI(ctx, p.db, p.conn, name)
	if err != nil {
		t.Fatal(err)
	}
	k := &kept{apps: map[int]tools.App{}}
	opt := remote.Options{Redactor: tools.NewRedactor([]string{runSecret}, nil), NoTrailer: true}
	if keepApps {
		opt.KeepApp = k.keep
	}
	out, err := remote.Call(ctx, remote.Callers{MCP: p.pool}, remote.Tool{Kind: catalog.KindRemote, ConnectionID: p.conn, RemoteName: name, UIResource: ui}, json.RawMessage(`{}`), opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, bad := range []string{"<p>", "<script", loginKey, runSecret} {
		if strings.Contains(out, bad) {
			t.Fatalf("%s: the model's text holds %q: %s", name, bad, out)
		}
	}
	return out, k.apps
}

// A tool whose listing declares a ui:// page: the page is read through the
// same login (resources/read), redacted of the login's key and the run's
// secrets, and kept; the model reads the text fallback and one line naming
// the kept app, never the page. The platform tells servers it hosts apps.
func TestDeclaredAppIsReadRedactedAndKept(t *testing.T) {
	p := newAppPeer(t)
	for _, name := range []string{"chart", "oldchart"} {
		out, apps := p.call(t, name, true)
		fallback := map[string]string{"chart": "3 points: 1, 2, 3", "oldchart": "the old way"}[name]
		want := fallback + "\n[app ui://apps/chart: text/html;profile=mcp-app, " + tools.HumanBytes(len(chartPage)) +
			"; kept as run app 7.1, shown to the operator in the run's transcript]"
		if out != want {
			t.Fatalf("%s: model text\n got %q\nwant %q", name, out, want)
		}
		a := apps[1]
		if len(apps) != 1 || a.URI != "ui://apps/chart" || a.MediaType != tools.AppMediaType ||
			!strings.Contains(a.HTML, "<script>parent.postMessage") || strings.Contains(a.HTML, loginKey) || strings.Contains(a.HTML, runSecret) {
			t.Fatalf("%s: kept %+v", name, apps)
		}
	}
	p.mu.Lock()
	ext, _ := p.extension.(map[string]any)
	p.mu.Unlock()
	if types, _ := ext["mimeTypes"].([]any); len(types) != 1 || types[0] != tools.AppMediaType {
		t.Fatalf("the client announced %#v for %s", p.extension, tools.AppExtension)
	}
}

// An embedded page is kept without a read and never reaches the model as
// text; a linked page is read. The Tools view's Test (no keeper) reads
// nothing and names the app as not kept.
func TestEmbeddedAndLinkedApps(t *testing.T) {
	p := newAppPeer(t)
	out, apps := p.call(t, "inline", true)
	if !strings.HasPrefix(out, "inline fallback\n[app ui://apps/inline: text/html;profile=mcp-app, ") ||
		!strings.Contains(out, "kept as run app 7.1") || !strings.Contains(out, "[app ui://apps/chart: text/html;profile=mcp-app") ||
		!strings.Contains(out, "kept as run app 7.2") {
		t.Fatalf("model text %q", out)
	}
	if apps[1].HTML != "<p>inline [REDACTED]</p>" || apps[2].URI != "ui://apps/chart" {
		t.Fatalf("kept %+v", apps)
	}
	before := p.reads.Load()
	out, apps = p.call(t, "chart", false)
	if out != "3 points: 1, 2, 3\n[app ui://apps/chart; not kept: only a run keeps apps]" || len(apps) != 0 || p.reads.Load() != before {
		t.Fatalf("test call: %q, kept %d, read %d", out, len(apps), p.reads.Load()-before)
	}
}

// Pages that cannot be kept are named with the reason and nothing is kept:
// over the size limit, not HTML, or not readable.
func TestAppsThatAreNotKept(t *testing.T) {
	p := newAppPeer(t)
	for name, want := range map[string]string{
		"big":  "a big one\n[app ui://apps/big: text/html;profile=mcp-app, 256.0 KiB; not kept: larger than the 256.0 KiB limit]",
		"data": "data, not a page\n[app ui://apps/data: application/json, 14 B; not kept: its media type \"application/json\" is not text/html]",
	} {
		out, apps := p.call(t, name, true)
		if out != want || len(apps) != 0 {
			t.Fatalf("%s:\n got %q\nwant %q\nkept %+v", name, out, want, apps)
		}
	}
	out, apps := p.call(t, "gone", true)
	if !strings.HasPrefix(out, "its page is gone\n[app ui://apps/gone; not kept: it could not be read: ") || len(apps) != 0 {
		t.Fatalf("gone: %q, kept %+v", out, apps)
	}
}
