package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

const quoteKey = "qk-run-secret-0123456789"

// runQuotes is a local adapter over a small quote service.
type runQuotes struct{}

func (runQuotes) Name() string { return "test_run_quotes" }

func (runQuotes) Check(ctx context.Context, c adapters.Conn) (string, error) {
	return "", c.GetJSON(ctx, "/ping", nil, http.Header{"X-Key": {c.Cred.AccessToken}}, nil)
}

func (runQuotes) Call(ctx context.Context, c adapters.Conn, _ string, args json.RawMessage) (string, error) {
	var in struct{ Symbol string }
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	var out struct{ Price float64 }
	if err := c.GetJSON(ctx, "/quote", map[string][]string{"symbol": {in.Symbol}}, http.Header{"X-Key": {c.Cred.AccessToken}}, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("symbol", "price", "note")
	t.Add(in.Symbol, out.Price, "quoted with "+c.Cred.AccessToken)
	return t.String(), nil
}

func init() { adapters.Register(runQuotes{}) }

// A run's model calls a local adapter's tool: the production offer path
// offers it from the guild's connected login, the tool activity reaches the
// adapter through the adapter host with the key resolved at call time (30 s
// adapter class), and the stored result is redacted.
func TestRunCallsAnAdapterTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	ctx := context.Background()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != quoteKey {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/quote" {
			_, _ = w.Write([]byte(`{"price":101.5}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(svc.Close)
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `WITH s AS (INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('quotes', 'Quotes', 'adapter', 'http', $1, 'token', '{"adapter":"test_run_quotes"}') RETURNING id)
		INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT id, 'quote', 'A price', '{"type":"object","properties":{"symbol":{"type":"string"}},"required":["symbol"]}', 0 FROM s`, svc.URL); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: e.db, Keyring: keys, Connectors: []connectors.Ref{{Provider: "quotes"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	adapters := host.New(host.Options{DB: e.db, Credentials: eng.Resolver()})
	c, _, err := connections.Connect(ctx, e.db, platformAdmin, nil, connections.ConnectInput{Slug: "quotes", OwnerScope: grants.ScopeGuild, OwnerID: e.guild})
	if err != nil {
		t.Fatal(err)
	}
	connect := &connections.Service{DB: e.db, Engine: eng, Adapters: adapters}
	if _, err := connect.ConnectKey(ctx, c.ID, map[string]string{connectors.MetaTokenField: quoteKey}, ""); err != nil {
		t.Fatal(err)
	}

	log := slog.New(slog.DiscardHandler)
	reg := native.Registry(e.db, log)
	offerer := runact.GrantsOfferer{S: grants.NewService(reg, integrations.New(func(string) string { return "" }), log)}
	a := runact.New(runact.Deps{DB: e.db, Tools: reg, Offerer: offerer, Adapters: adapters, Secrets: eng,
		Models: e.res, Log: log, Heartbeat: 200 * time.Millisecond})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	e.model.script = []turn{{Calls: []call{{"quotes_quote", `{"symbol":"ETH"}`}}}, {Text: "ETH is at 101.5"}}
	id := e.start("what is ETH at?", 5)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	tc := tr.ToolCalls[0]
	if tc.Tool != "quotes_quote" || tc.Outcome != runs.OutcomeOK || !strings.Contains(tc.Result, "ETH\t101.5\tquoted with [REDACTED]") ||
		strings.Contains(tc.Result, quoteKey) {
		t.Fatalf("tool call = %s %s %q", tc.Tool, tc.Outcome, tc.Result)
	}
	snap, err := runs.SnapshotOf(ctx, e.db, id)
	if err != nil {
		t.Fatal(err)
	}
	if q, ok := snap.Tool("quotes_quote"); !ok || q.Class != string(tools.ClassAdapter) {
		t.Fatalf("snapshot quotes_quote = %+v", q)
	}
	reqs := e.model.Requests()
	if raw, _ := json.Marshal(reqs); strings.Contains(string(raw), quoteKey) {
		t.Fatal("the key reached the model")
	}
	if h := historyBytes(t, e, id); bytes.Contains(h, []byte(quoteKey)) || !bytes.Contains(h, []byte("quotes_quote")) {
		t.Fatal("the workflow history holds the key, or is not this run's")
	}
}
