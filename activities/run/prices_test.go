package run_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
)

const geckoKey = "CG-run-start-secret-9d04"

// geckoPrices answers /ping and /simple/price as CoinGecko Pro does, for one key.
func geckoPrices(t *testing.T) *httptest.Server {
	quotes := map[string]string{
		"bitcoin":  `{"usd":67187.3361,"usd_24h_change":3.6361}`,
		"ethereum": `{"usd":3521.4,"usd_24h_change":-1.2447}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("x-cg-pro-api-key") != geckoKey {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":{"error_code":10002,"error_message":"Incorrect API Key"}}`))
			return
		}
		switch r.URL.Path {
		case "/ping":
			_, _ = w.Write([]byte(`{"gecko_says":"(V3) To the Moon!"}`))
		case "/simple/price":
			var parts []string
			for _, id := range strings.Split(r.URL.Query().Get("ids"), ",") {
				if q, ok := quotes[id]; ok {
					parts = append(parts, fmt.Sprintf("%q:%s", id, q))
				}
			}
			_, _ = w.Write([]byte("{" + strings.Join(parts, ",") + "}"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// At run start the snapshot quotes the coins of the Pinned prices login the
// agent uses, and every model turn shows them after the memory; the key
// reaches neither the model nor the log. A service that cannot answer gives
// an "unavailable" section and the run goes on; an agent whose binding turns
// the server off sees no section.
func TestStatePricesAtRunStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	gecko := geckoPrices(t)
	rec := &chatRecorder{}
	chat := httptest.NewServer(rec)
	t.Cleanup(chat.Close)
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: chat.URL}}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	logs := &testlog.Buffer{}
	a := runact.New(runact.Deps{DB: db, Models: res, Credentials: eng.Resolver(), Log: slog.New(slog.NewTextHandler(logs, nil))})

	var org, guild, agent, other, server, conn string
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org))
	must(db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild))
	must(db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'You are a test agent.') RETURNING id`,
		guild).Scan(&agent))
	must(db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'quiet', 'openrouter/test-model', 'Quiet.') RETURNING id`,
		guild).Scan(&other))
	must(db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('pinned_prices', 'Pinned prices', 'adapter', 'http', $1, 'token', '{"adapter":"pinned_prices"}')
		ON CONFLICT (slug) DO UPDATE SET url = EXCLUDED.url, kind = 'adapter', auth = 'token', config = EXCLUDED.config
		RETURNING id`, gecko.URL).Scan(&server))
	// An organisation login, connected as Connect leaves it: sealed key, enabled binding, coins.
	conn = connectionstest.Insert(t, db, server, "organisation", org)
	_, err = eng.ConnectKey(ctx, uuid.MustParse(conn), map[string]string{"token": geckoKey})
	must(err)
	must(connections.MarkConnected(ctx, db, conn, ""))
	must(pinnedprices.ReplaceCoins(ctx, db, conn, []pinnedprices.Coin{
		{ID: "ethereum", Symbol: "eth", Name: "Ethereum"}, {ID: "bitcoin", Symbol: "btc", Name: "Bitcoin"}}))
	// The quiet agent has the server switched off at its own scope.
	_, err = db.Exec(ctx, `INSERT INTO bindings (scope, agent_id, catalog_kind, catalog_id, server_id, enabled)
		VALUES ('agent', $1, 'mcp', $2, $3, false)`, other, server, server)
	must(err)

	start := func(agentID string) (runs.Snapshot, string) {
		t.Helper()
		r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agentID, GuildID: guild, OrganisationID: org, Trigger: "direct",
			Model: "openrouter/test-model", Budget: 5, Message: "hello"})
		must(err)
		_, err = a.Snapshot(ctx, runact.SnapshotInput{RunID: r.ID})
		must(err)
		snap, err := runs.SnapshotOf(ctx, db, r.ID)
		must(err)
		_, err = a.Model(ctx, runact.ModelInput{RunID: r.ID, Seq: 2})
		must(err)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return snap, rec.systems[len(rec.systems)-1]
	}

	want := "State prices (USD, at run start):\nETH Ethereum: 3521.40 (-1.2% 24h)\nBTC Bitcoin: 67187.34 (+3.6% 24h)"
	snap, sys := start(agent)
	if snap.StatePrices != want {
		t.Fatalf("stored section:\n%s\nwant:\n%s", snap.StatePrices, want)
	}
	if sys != "You are a test agent.\n\n"+want {
		t.Fatalf("system prompt:\n%s", sys)
	}

	if _, sys := start(other); strings.Contains(sys, "State prices") {
		t.Fatalf("the server is off for this agent, yet: %q", sys)
	}

	// CoinGecko cannot answer: the run starts all the same.
	gecko.Close()
	snap, sys = start(agent)
	if !strings.Contains(snap.StatePrices, "unavailable") || !strings.HasSuffix(sys, snap.StatePrices) {
		t.Fatalf("service down: %q / %q", snap.StatePrices, sys)
	}

	rec.mu.Lock()
	for _, s := range rec.systems {
		if strings.Contains(s, geckoKey) {
			t.Errorf("a model request carries the key: %q", s)
		}
	}
	rec.mu.Unlock()
	if strings.Contains(logs.String(), geckoKey) {
		t.Errorf("the log carries the key")
	}
	if !strings.Contains(logs.String(), "state prices: quote failed") {
		t.Errorf("the failed quote was not logged: %s", logs.String())
	}
}
