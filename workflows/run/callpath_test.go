package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/workflows/run"
)

// oauthRemote is a guild's OAuth login of a real MCP server whose whoami
// tool answers the Authorization header it received, with the production
// engine, pool and offer path wired into a run worker.
type oauthRemote struct {
	as       *oauthtest.Server
	conn     string
	slug     string
	eng      *connectors.Engine
	pool     *mcppool.Pool
	requests atomic.Int64 // MCP requests that reached the server
}

func newOAuthRemote(t *testing.T, e *env, slug string) *oauthRemote {
	t.Helper()
	ctx := context.Background()
	o := &oauthRemote{as: oauthtest.New(t), slug: slug}
	mcpSrv := server.NewMCPServer("echo-auth", "1.0.0", server.WithToolCapabilities(false))
	mcpSrv.AddTool(mcp.NewTool("whoami"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("you sent " + req.Header.Get("Authorization")), nil
	})
	h := server.NewStreamableHTTPServer(mcpSrv, server.WithStateful(true))
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.requests.Add(1)
		h.ServeHTTP(w, r)
	})
	rs := o.as.Protect(t, "/mcp", counted, nil)

	const redirect = "http://127.0.0.1:1/callback"
	reg, err := http.Post(o.as.URL+"/register", "application/json", strings.NewReader(`{"redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ID string `json:"client_id"`
	}
	json.NewDecoder(reg.Body).Decode(&client) //nolint:errcheck
	reg.Body.Close()
	cfg := fmt.Sprintf(`{"provider":"oauth2","oauth":{"auth_url":%q,"token_url":%q,"client_id":%q,"auth_style":"none"}}`,
		o.as.URL+"/authorize", o.as.URL+"/token", client.ID)
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ($1, $1, 'remote', 'http', $2, 'oauth', $3)`, slug, rs.URL+"/mcp", cfg); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	o.eng, err = connectors.New(ctx, connectors.Options{DB: e.db, Keyring: keys, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.eng.Close)
	o.pool = mcppool.New(mcppool.Options{DB: e.db, Credentials: o.eng.Resolver()})
	t.Cleanup(o.pool.Close)

	c, _, err := connections.Connect(ctx, e.db, platformAdmin, nil, connections.ConnectInput{Slug: slug, OwnerScope: grants.ScopeGuild, OwnerID: e.guild})
	if err != nil {
		t.Fatal(err)
	}
	o.conn = c.ID
	authURL, err := o.eng.BeginOAuth(ctx, uuid.MustParse(c.ID), redirect)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.eng.CompleteOAuth(ctx, back.Query().Get("state"), back.Query().Get("code")); err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, e.db, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := o.pool.Sync(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	return o
}

// startWorker runs the run workflow's worker as the platform assembles it.
func (o *oauthRemote) startWorker(t *testing.T, e *env) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	reg := native.Registry(e.db, log)
	offerer := runact.GrantsOfferer{S: grants.NewService(reg, integrations.New(func(string) string { return "" }), log)}
	a := runact.New(runact.Deps{DB: e.db, Tools: reg, Offerer: offerer, MCP: o.pool, Secrets: o.eng,
		Models: e.res, Log: log, Heartbeat: 200 * time.Millisecond})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// A run's remote call that refreshes its token on the way (the server
// answers 401 first) stores a result without the token it sent.
func TestRunRedactsATokenRefreshedDuringTheCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	o := newOAuthRemote(t, e, "echoauth")
	o.startWorker(t, e)
	o.as.ExpireAccess() // the call gets a 401, refreshes and retries

	e.model.script = []turn{{Calls: []call{{"echoauth_whoami", `{}`}}}, {Text: "done"}}
	id := e.start("who am I?", 5)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	if got := tr.ToolCalls[0].Result; !strings.HasPrefix(got, "you sent Bearer [REDACTED]") || strings.Contains(got, "at-") {
		t.Fatalf("result = %q", got)
	}
	if o.as.Count("refresh") != 1 {
		t.Fatalf("refreshes = %d, want 1", o.as.Count("refresh"))
	}
	if h := historyBytes(t, e, id); bytes.Contains(h, []byte("Bearer at-")) {
		t.Fatal("the workflow history holds the token")
	}
}

// A remote tool switched off while a run is going (a binding turned off on
// the tool, or on its whole server, or its login deleted) refuses the run's
// next call, with no request reaching the server.
func TestRunStopsCallingARemoteToolTurnedOff(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{grants.KindMCPTool, grants.KindMCP, "deleted login"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, envOptions{noWorker: true})
			o := newOAuthRemote(t, e, "echoauth")
			o.startWorker(t, e)
			ctx := context.Background()
			catalogID := "echoauth_whoami"
			if kind == grants.KindMCP {
				catalogID = "echoauth"
			}
			var atOff int64
			off := false
			call := turn{Calls: []call{{"echoauth_whoami", `{}`}}}
			e.model.script = []turn{call}
			e.model.repeat = func(n int) turn {
				if n == 1 {
					// Between the two calls, as an operator would: PUT the
					// binding off, or DELETE the login (the API's Forget
					// reaches this worker's resolver through Redis only, so
					// it is left out: the call-time checks must suffice).
					if kind == "deleted login" {
						if err := connections.DeleteConnection(ctx, e.db, platformAdmin, o.conn); err != nil {
							t.Errorf("delete the login: %v", err)
						}
					} else if _, err := bindings.PutBinding(ctx, e.db, platformAdmin, grants.BindingInput{Scope: grants.ScopeGuild, ScopeID: e.guild,
						CatalogKind: kind, CatalogID: catalogID, Enabled: &off}); err != nil {
						t.Errorf("turn the tool off: %v", err)
					}
					atOff = o.requests.Load()
					return call
				}
				return turn{Text: "done"}
			}
			id := e.start("who am I, twice?", 5)
			res, err := e.wait(id, 2*time.Minute)
			if err != nil || res.Status != runs.StatusCompleted {
				t.Fatalf("run: %+v %v", res, err)
			}
			tr := transcript(t, e, id)
			if len(tr.ToolCalls) != 2 {
				t.Fatalf("tool calls = %+v", tr.ToolCalls)
			}
			first, second := tr.ToolCalls[0], tr.ToolCalls[1]
			if first.Outcome != runs.OutcomeOK {
				t.Fatalf("first call = %s %q", first.Outcome, first.Result)
			}
			if second.Outcome != runs.OutcomeRefused || !strings.HasPrefix(second.Result, "ERROR: echoauth_whoami was turned off") {
				t.Fatalf("second call = %s %q", second.Outcome, second.Result)
			}
			if n := o.requests.Load(); n != atOff {
				t.Fatalf("%d requests reached the server after the tool was turned off", n-atOff)
			}
		})
	}
}
