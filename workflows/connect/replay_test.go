package connect

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
)

var record = flag.Bool("record", false, "record workflow histories into testdata/ for the replay tests")

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

// Recorded histories (go test -run TestConnectOnDevServer ./workflows/connect/ -record)
// must replay against the current workflow code: a change that breaks them
// would break logins in flight and needs workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)), f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// devEnv is a connect worker on the dev server with the real activities, a
// fresh database, an authorization server and the MCP server it protects.
type devEnv struct {
	c     client.Client
	queue string
	db    *pgxpool.Pool
	kr    *secret.Keyring
	eng   *connectors.Engine
	as    *oauthtest.Server
	org   uuid.UUID
}

const devRedirect = "http://127.0.0.1:9/api/mcp/oauth/callback"

func newDevEnv(t *testing.T) *devEnv {
	t.Helper()
	ctx := context.Background()
	e := &devEnv{c: testtemporal.Client(t), queue: testtemporal.TaskQueue(t), db: testdb.New(t)}
	k, _ := secret.GenerateKey("k1")
	var err error
	if e.kr, err = secret.ParseKeyring(k); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	e.eng, err = connectors.New(ctx, connectors.Options{DB: e.db, Keyring: e.kr, Logger: quiet,
		Providers: []connectors.ProviderID{"oauth2"}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.eng.Close)
	pool := mcppool.New(mcppool.Options{DB: e.db, Credentials: e.eng.Resolver(), Log: quiet})
	t.Cleanup(pool.Close)

	e.as = oauthtest.New(t)
	mcpSrv := server.NewMCPServer("fake", "1.0.0", server.WithToolCapabilities(false))
	mcpSrv.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	rs := e.as.Protect(t, "/mcp", server.NewStreamableHTTPServer(mcpSrv, server.WithStateful(true)), nil)
	if _, err := e.db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ('notion', 'Notion', 'http', $1, 'oauth', '{"provider":"oauth2","dynamic_registration":true}')`, rs.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org); err != nil {
		t.Fatal(err)
	}

	w := worker.New(e.c, e.queue, worker.Options{})
	Register(w, &acts.Activities{DB: e.db, Engine: e.eng, Keyring: e.kr, Pool: pool, Log: quiet,
		Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return e
}

func (e *devEnv) login(t *testing.T) string {
	t.Helper()
	id, err := e.eng.EnsureConnection(context.Background(), "notion", "organisation", &e.org)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func (e *devEnv) status(t *testing.T, id string) string {
	return connectionstest.StatusOr(t, e.db, id, "absent")
}

// browse opens the authorization URL as the browser would and returns the
// callback's query.
func browse(t *testing.T, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("authorize answered %d", resp.StatusCode)
	}
	return loc.Query()
}

func fetchHistory(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), ID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// checkHistory fails when a secret appears in the history's wire encoding
// (payloads as plain bytes), and writes the history under -record.
func checkHistory(t *testing.T, e *devEnv, id, name string, secrets ...string) {
	t.Helper()
	h := fetchHistory(t, e.c, id)
	raw, err := proto.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if s != "" && bytes.Contains(raw, []byte(s)) {
			t.Errorf("the workflow history holds a secret (%d bytes long)", len(s))
		}
	}
	if !*record {
		return
	}
	js, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), js, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The three endings of a login on the real server, with the real activities:
// connected, denied and expired. Their histories feed the replay test.
func TestConnectOnDevServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("connected", func(t *testing.T) {
		e := newDevEnv(t)
		id := e.login(t)
		authURL, err := Start(ctx, e.c, e.queue, Input{ConnectionID: id, RedirectURI: devRedirect}, e.eng)
		if err != nil {
			t.Fatal(err)
		}
		q := browse(t, authURL)
		sealed, err := acts.Seal(e.kr, id, acts.CallbackParams{State: q.Get("state"), Code: q.Get("code")})
		if err != nil {
			t.Fatal(err)
		}
		if err := Deliver(ctx, e.c, id, Callback{Sealed: sealed}); err != nil {
			t.Fatal(err)
		}
		res, err := Wait(ctx, e.c, id)
		if err != nil || res.Status != StatusConnected || res.Tools != 1 {
			t.Fatalf("result %+v %v", res, err)
		}
		if e.status(t, id) != "connected" {
			t.Fatalf("status %s", e.status(t, id))
		}
		cred, err := e.eng.Resolver().Token(ctx, uuid.MustParse(id))
		if err != nil || cred.AccessToken == "" || cred.RefreshToken == "" {
			t.Fatalf("stored login: %s %v", cred, err)
		}
		// The authorization URL (with its state) stays sealed in the pending
		// login; the code only travels sealed.
		checkHistory(t, e, id, "connected.json", cred.AccessToken, cred.RefreshToken, q.Get("code"), q.Get("state"), authURL)
	})

	t.Run("denied", func(t *testing.T) {
		e := newDevEnv(t)
		e.as.Deny = true
		id := e.login(t)
		authURL, err := Start(ctx, e.c, e.queue, Input{ConnectionID: id, RedirectURI: devRedirect}, e.eng)
		if err != nil {
			t.Fatal(err)
		}
		q := browse(t, authURL)
		if err := Deliver(ctx, e.c, id, Callback{Error: q.Get("error")}); err != nil {
			t.Fatal(err)
		}
		res, err := Wait(ctx, e.c, id)
		if err != nil || res.Status != StatusDenied {
			t.Fatalf("result %+v %v", res, err)
		}
		if e.status(t, id) != "absent" {
			t.Fatal("a denied new login must be deleted")
		}
		checkHistory(t, e, id, "denied.json")
	})

	t.Run("expired", func(t *testing.T) {
		e := newDevEnv(t)
		id := e.login(t)
		if _, err := Start(ctx, e.c, e.queue, Input{ConnectionID: id, RedirectURI: devRedirect, Deadline: time.Second}, e.eng); err != nil {
			t.Fatal(err)
		}
		res, err := Wait(ctx, e.c, id)
		if err != nil || res.Status != StatusExpired {
			t.Fatalf("result %+v %v", res, err)
		}
		if e.status(t, id) != "absent" {
			t.Fatal("an expired new login must be deleted")
		}
		if err := Deliver(ctx, e.c, id, Callback{Error: "late"}); err != ErrNoLogin {
			t.Fatalf("a callback after the end: %v", err)
		}
		checkHistory(t, e, id, "expired.json")
	})
}
