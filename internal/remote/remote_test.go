package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

const (
	loginKey  = "lk_9f3a7c21e8d04b56"
	runSecret = "rs_51d0e6b7a2c94f38"
)

// echoSchema is what the peer lists for echo: text required, note optional.
var echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"note":{"type":"string"}},"required":["text"]}`)

// peer is a real MCP server behind a bearer check, connected as a login
// through the production engine and pool.
type peer struct {
	pool  *mcppool.Pool
	conn  string
	calls atomic.Int64 // tools/call requests that reached the server
	key   atomic.Value // the bearer key the server accepts
	quiet *slog.Logger
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	ctx := context.Background()
	p := &peer{quiet: slog.New(slog.DiscardHandler)}
	p.key.Store(loginKey)
	s := server.NewMCPServer("peer", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required()), mcp.WithString("note")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.calls.Add(1)
			raw, _ := json.Marshal(req.GetArguments())
			return mcp.NewToolResultText("got " + string(raw) + " with " + req.Header.Get("Authorization")), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+p.key.Load().(string) {
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
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr,
		Providers: []connectors.ProviderID{"oauth2"}, Logger: p.quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	p.pool = mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.pool.Close)

	var org, srv string
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org))
	must(db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('peer', 'peer', 'remote', 'http', $1, 'token', '{"header":"Authorization","scheme":"Bearer"}') RETURNING id`,
		hs.URL).Scan(&srv))
	p.conn = connectionstest.Insert(t, db, srv, "organisation", org)
	_, err = eng.ConnectKey(ctx, uuid.MustParse(p.conn), map[string]string{"token": loginKey})
	must(err)
	must(connections.MarkConnected(ctx, db, p.conn, ""))
	return p
}

func (p *peer) tool(schema json.RawMessage) remote.Tool {
	return remote.Tool{Kind: catalog.KindRemote, ConnectionID: p.conn, RemoteName: "echo", Schema: schema}
}

func (p *peer) callers() remote.Callers { return remote.Callers{MCP: p.pool} }

// adapterCaller stands for the adapter host: it answers every call with the
// login and tool it was given.
type adapterCaller struct{ calls atomic.Int64 }

func (a *adapterCaller) Call(_ context.Context, connectionID, remoteName string, _ json.RawMessage) (string, error) {
	a.calls.Add(1)
	return "adapter " + remoteName + " of " + connectionID, nil
}

// A call is routed by the login's catalog kind, which the offer knows: an
// adapter's tool never reaches the MCP pool, and is refused where no adapter
// host serves it.
func TestCallRoutesByKind(t *testing.T) {
	t.Parallel()
	p := newPeer(t)
	ctx := context.Background()
	host := &adapterCaller{}
	tool := remote.Tool{Kind: catalog.KindAdapter, ConnectionID: p.conn, RemoteName: "quote"}
	got, err := remote.Call(ctx, remote.Callers{MCP: p.pool, Adapters: host}, tool, json.RawMessage(`{}`), p.opts(1, true))
	if err != nil || got != "adapter quote of "+p.conn || host.calls.Load() != 1 || p.calls.Load() != 0 {
		t.Fatalf("adapter call: %q %v (host %d, peer %d)", got, err, host.calls.Load(), p.calls.Load())
	}
	if got, err = remote.Call(ctx, p.callers(), tool, json.RawMessage(`{}`), p.opts(1, true)); !errors.Is(err, remote.ErrNoCaller) || !strings.HasPrefix(got, "ERROR: ") {
		t.Fatalf("adapter call without a host: %q %v", got, err)
	}
	if got, err = remote.Call(ctx, remote.Callers{MCP: p.pool, Adapters: host}, p.tool(echoSchema), json.RawMessage(`{"text":"x"}`), p.opts(1, true)); err != nil ||
		!strings.HasPrefix(got, "got ") || host.calls.Load() != 1 || p.calls.Load() != 1 {
		t.Fatalf("remote call: %q %v", got, err)
	}
}

func (p *peer) opts(remaining int, noTrailer bool) remote.Options {
	return remote.Options{Redactor: tools.NewRedactor([]string{runSecret}, p.quiet), Remaining: remaining, NoTrailer: noTrailer, Log: p.quiet}
}

// A sent call: the optional empty string is dropped before the server sees
// it, the answer is redacted of the caller's set and of the login's key, and
// the trailer is there for a run and left out for the Test.
func TestCallPreparesRedactsAndStamps(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	args := json.RawMessage(`{"text":"` + runSecret + `","note":""}`)
	got, err := remote.Call(ctx, p.callers(), p.tool(echoSchema), args, p.opts(3, false))
	want := `got {"text":"[REDACTED]"} with Bearer [REDACTED]` + "\n\nOnly 3 tool calls remain: wrap up and give your final answer.\nremaining_tool_calls: 3"
	if err != nil || got != want {
		t.Fatalf("run call: %v\n got %q\nwant %q", err, got, want)
	}
	got, err = remote.Call(ctx, p.callers(), p.tool(echoSchema), args, p.opts(3, true))
	if want := `got {"text":"[REDACTED]"} with Bearer [REDACTED]`; err != nil || got != want {
		t.Fatalf("test call: %v\n got %q\nwant %q", err, got, want)
	}
	// A required empty string is forwarded as the model sent it.
	got, err = remote.Call(ctx, p.callers(), p.tool(echoSchema), json.RawMessage(`{"text":""}`), p.opts(3, true))
	if err != nil || !strings.HasPrefix(got, `got {"text":""} `) {
		t.Fatalf("required empty string: %v %q", err, got)
	}
}

// What cannot be checked or redacted is not sent: arguments that do not fit
// the schema, a schema that does not compile, a call without a redaction set.
// Each answers a stamped ERROR result and an error the caller can tell apart.
func TestCallRefusesBeforeSending(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	got, err := remote.Call(ctx, p.callers(), p.tool(echoSchema), json.RawMessage(`{"text":5}`), p.opts(2, false))
	var argErr *tools.ArgumentError
	if !errors.As(err, &argErr) || !strings.HasPrefix(got, "ERROR: invalid arguments: ") || !strings.HasSuffix(got, "remaining_tool_calls: 2") {
		t.Fatalf("bad arguments: %v %q", err, got)
	}
	got, err = remote.Call(ctx, p.callers(), p.tool(json.RawMessage(`{"type":12}`)), json.RawMessage(`{"text":"x"}`), p.opts(2, true))
	var schemaErr *remote.SchemaError
	if !errors.As(err, &schemaErr) || !strings.HasPrefix(got, "ERROR: the tool's schema does not compile") {
		t.Fatalf("bad schema: %v %q", err, got)
	}
	opt := p.opts(2, true)
	opt.Redactor = nil
	if got, err = remote.Call(ctx, p.callers(), p.tool(echoSchema), json.RawMessage(`{"text":"x"}`), opt); !errors.Is(err, remote.ErrNoRedactor) || !strings.HasPrefix(got, "ERROR: ") {
		t.Fatalf("no redactor: %v %q", err, got)
	}
	if got, err = remote.Call(ctx, remote.Callers{}, p.tool(echoSchema), json.RawMessage(`{"text":"x"}`), p.opts(2, true)); !errors.Is(err, remote.ErrNoCaller) || !strings.HasPrefix(got, "ERROR: ") {
		t.Fatalf("no pool: %v %q", err, got)
	}
	if n := p.calls.Load(); n != 0 {
		t.Fatalf("%d refused calls reached the server", n)
	}
}

// A login the server no longer accepts: the result is an ERROR without the
// key, and the error is the pool's reconnect-required, for the Test's 409.
func TestCallReportsAPoolFailure(t *testing.T) {
	p := newPeer(t)
	p.key.Store("ak_0c7e2f91b4d35a68")
	got, err := remote.Call(context.Background(), p.callers(), p.tool(echoSchema), json.RawMessage(`{"text":"x"}`), p.opts(4, false))
	var rr *connectors.ErrReconnectRequired
	if !errors.As(err, &rr) || !strings.HasPrefix(got, "ERROR: ") || strings.Contains(got, loginKey) || !strings.HasSuffix(got, "remaining_tool_calls: 4") {
		t.Fatalf("rejected login: %v %q", err, got)
	}
}
