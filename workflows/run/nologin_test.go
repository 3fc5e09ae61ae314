package run_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
)

// A run calls a tool of a server that needs no login once it is turned on
// at its guild (a credential-less login, ADR 0616), and stops calling it
// when the server is turned off mid-run, with no request reaching it.
func TestRunCallsANoLoginServerUntilTurnedOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	ctx := context.Background()
	var requests atomic.Int64
	mcpSrv := server.NewMCPServer("open", "1.0.0", server.WithToolCapabilities(false))
	mcpSrv.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
	})
	h := server.NewStreamableHTTPServer(mcpSrv, server.WithStateful(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	url := hs.URL
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('open', 'Open', 'remote', 'http', $1, 'none', '{}')`, url+"/mcp"); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: e.db, Keyring: keys, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	pool := mcppool.New(mcppool.Options{DB: e.db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	svc := &connections.Service{DB: e.db, Engine: eng, Sessions: pool, Checker: mcppool.Checker{DB: e.db, Engine: eng}}
	if _, err := svc.Connect(ctx, platformAdmin, connections.Request{
		Login: connections.ConnectInput{Slug: "open", OwnerScope: grants.ScopeGuild, OwnerID: e.guild}}); err != nil {
		t.Fatalf("turn the server on: %v", err)
	}
	(&oauthRemote{eng: eng, pool: pool}).startWorker(t, e)

	var atOff int64
	off := false
	call := turn{Calls: []call{{"open_echo", `{"text":"hi"}`}}}
	e.model.script = []turn{call}
	e.model.repeat = func(n int) turn {
		if n == 1 {
			if _, err := bindings.PutBinding(ctx, e.db, platformAdmin, grants.BindingInput{Scope: grants.ScopeGuild, ScopeID: e.guild,
				CatalogKind: grants.KindMCP, CatalogID: "open", Enabled: &off}); err != nil {
				t.Errorf("turn the server off: %v", err)
			}
			atOff = requests.Load()
			return call
		}
		return turn{Text: "done"}
	}
	id := e.start("echo hi, twice", 5)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	if first := tr.ToolCalls[0]; first.Outcome != runs.OutcomeOK || !strings.HasPrefix(first.Result, "echo: hi") {
		t.Fatalf("first call = %s %q", first.Outcome, first.Result)
	}
	if second := tr.ToolCalls[1]; second.Outcome != runs.OutcomeRefused || !strings.HasPrefix(second.Result, "ERROR: open_echo was turned off") {
		t.Fatalf("second call = %s %q", second.Outcome, second.Result)
	}
	if n := requests.Load(); n != atOff {
		t.Fatalf("%d requests reached the server after it was turned off", n-atOff)
	}
}
