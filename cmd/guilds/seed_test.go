package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
	"github.com/guilds/guilds/internal/testtemporal"
)

// TestMigrateUpSeedsWhatServeOffers: a production install is `migrate up`
// then `serve`; a new agent is offered the native tools and the catalog lists
// the shipped servers, with no `guilds dev` ever run.
func TestMigrateUpSeedsWhatServeOffers(t *testing.T) {
	key, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", "")
	if code, _, stderr := runCmd(t, "", "migrate", "down", "all"); code != 0 {
		t.Fatalf("migrate down all: %s", stderr)
	}
	if code, _, stderr := runCmd(t, "", "migrate", "up"); code != 0 {
		t.Fatalf("migrate up: %s", stderr)
	}
	code, out, stderr := runCmd(t, "", "tokens", "create", "--admin")
	if code != 0 {
		t.Fatalf("tokens create: %s", stderr)
	}
	token := strings.TrimSpace(out)

	ctx := context.Background()
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := openPlatform(ctx, cfg, newLogger(io.Discard), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	call := serveAPI(t, p, token)
	agentID := newAgent(call)
	var offered any
	call("GET", "/api/agents/"+agentID+"/offered-tools", nil, &offered)
	got, _ := json.Marshal(offered)
	for _, want := range []string{"note_write", "record_search", "memory_write"} {
		if !strings.Contains(string(got), `"`+want+`"`) {
			t.Errorf("a new agent is not offered %s after migrate up: %s", want, got)
		}
	}
	var servers []map[string]any
	call("GET", "/api/mcp/servers", nil, &servers)
	if len(servers) == 0 {
		t.Error("the catalog is empty after migrate up")
	}
}

// TestConcurrentSeedsDoNotFail: replicas of serve and worker start at once
// and each seeds; none may fail, and the catalog ends whole.
func TestConcurrentSeedsDoNotFail(t *testing.T) {
	db, err := pgxpool.New(context.Background(), testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const replicas = 4
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, replicas)
		for i := 0; i < replicas; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- seed(context.Background(), db, native.Registry(nil, slog.New(slog.DiscardHandler)))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent seed: %v", round, err)
			}
		}
	}
	var tools, dup int
	err = db.QueryRow(context.Background(), `SELECT count(*), count(*) - count(DISTINCT (server_id, name)) FROM mcp_catalog_tools`).Scan(&tools, &dup)
	if err != nil || tools == 0 || dup != 0 {
		t.Fatalf("catalog tools after concurrent seeds: %d (%d duplicated), %v", tools, dup, err)
	}
}

// TestServeOnUnmigratedDatabaseSaysMigrate: seeding at start names the fix.
func TestServeOnUnmigratedDatabaseSaysMigrate(t *testing.T) {
	key, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", "")
	if code, _, stderr := runCmd(t, "", "migrate", "down", "all"); code != 0 {
		t.Fatalf("migrate down all: %s", stderr)
	}
	cfg, _ := config.Load(nil)
	p, err := openPlatform(context.Background(), cfg, newLogger(io.Discard), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if err := p.seed(context.Background()); err == nil || !strings.Contains(err.Error(), "guilds migrate up") {
		t.Fatalf("seed on an unmigrated database: %v", err)
	}
}

// apiCall sends a request to the API with a token, fails the test on a
// status of 300 or more, and decodes the reply into out.
type apiCall func(method, path string, body, out any)

// serveAPI serves the platform's API as `guilds serve` builds it.
func serveAPI(t *testing.T, p *platform, token string) apiCall {
	t.Helper()
	srv, err := p.apiServer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return func(method, path string, body, out any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, hs.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 || json.Unmarshal(b, out) != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
}

// newAgent creates an organisation, a guild and an agent and returns the agent's id.
func newAgent(call apiCall) string {
	var org, guild, agent map[string]any
	call("POST", "/api/orgs", map[string]any{"name": "Acme"}, &org)
	call("POST", "/api/orgs/"+org["id"].(string)+"/guilds", map[string]any{"name": "Ops"}, &guild)
	call("POST", "/api/guilds/"+guild["id"].(string)+"/agents", map[string]any{"name": "Scribe"}, &agent)
	return agent["id"].(string)
}

// TestWorkerStartSeeds: a binary upgraded without re-running migrate still
// brings its catalog and native tools when the worker (or serve) starts.
func TestWorkerStartSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("uses a Temporal server")
	}
	key, _ := secret.GenerateKey("k1")
	dbURL := testdb.URL(t) // migrated, never seeded
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", testtemporal.Address(t))
	t.Setenv("TEMPORAL_NAMESPACE", testtemporal.Namespace(t))
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr testlog.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"worker"}, strings.NewReader(""), io.Discard, &stderr) }()
	for {
		var bindings int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM bindings WHERE scope = 'platform' AND catalog_kind = 'native_tool'`).Scan(&bindings); err != nil {
			t.Fatal(err)
		}
		if bindings > 0 {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("worker exited %d before seeding: %s", code, stderr.String())
		case <-ctx.Done():
			t.Fatalf("the worker never seeded the native tools: %s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	<-done
}
