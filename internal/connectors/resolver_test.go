package connectors_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testlog"
)

func TestResolveAndInject(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{})
	r := eng.Resolver()
	if _, err := r.Token(context.Background(), id); !errors.Is(err, connectors.ErrNoCredential) {
		t.Fatalf("pending connection: %v", err)
	}
	e.connect(t, eng, id)
	cred, err := r.Token(context.Background(), id)
	if err != nil || !strings.HasPrefix(cred.AccessToken, "AT-") {
		t.Fatalf("Token = %v, %v", cred, err)
	}
	if s := cred.String(); strings.Contains(s, cred.AccessToken) || strings.Contains(s, cred.RefreshToken) {
		t.Fatal("Credential.String leaks")
	}
	h := r.HeaderFunc(id)(context.Background())
	if h["Authorization"] != "Bearer "+cred.AccessToken {
		t.Fatalf("headers = %v", h)
	}
	meta, err := r.Meta(context.Background(), id)
	if err != nil || meta[connectors.MetaTokenField] != cred.AccessToken {
		t.Fatalf("meta = %v, %v", meta, err)
	}
	var gotAuth string
	api := httptestServer(t, func(w http.ResponseWriter, req *http.Request) { gotAuth = req.Header.Get("Authorization") })
	c := &http.Client{Transport: r.Transport(nil, id)}
	resp, err := c.Get(api)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotAuth != "Bearer "+cred.AccessToken {
		t.Fatalf("transport sent %q", gotAuth)
	}
	conn, err := eng.Get(context.Background(), id)
	if err != nil || conn.Status != connectors.StatusConnected || conn.Health.State != connectors.HealthHealthy {
		t.Fatalf("Get = %+v, %v", conn, err)
	}

	// Disconnect revokes, wipes, and every later call names the connection.
	if err := eng.Disconnect(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	_, err = r.Token(context.Background(), id)
	var rr *connectors.ErrReconnectRequired
	if !errors.As(err, &rr) || rr.ConnectionID != id || !strings.Contains(err.Error(), "acme") {
		t.Fatalf("after disconnect: %v", err)
	}
	if _, err := c.Get(api); !errors.As(err, &rr) {
		t.Fatalf("transport after disconnect: %v", err)
	}
	e.ts.mu.Lock()
	revoked := e.ts.revoked
	e.ts.mu.Unlock()
	if !revoked {
		t.Fatal("disconnect did not revoke at the provider")
	}
	// Reconnecting works again.
	e.connect(t, eng, id)
	if _, err := r.Token(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

func TestInProcessStorm(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{})
	e.connectExpired(t, eng, id)
	var wg sync.WaitGroup
	tokens := make([]string, 200)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := eng.Resolver().Token(context.Background(), id)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = c.AccessToken
		}()
	}
	wg.Wait()
	if n := e.ts.requests.Load(); n != 1 {
		t.Fatalf("token endpoint saw %d refreshes, want 1", n)
	}
	for _, tok := range tokens {
		if tok != tokens[0] {
			t.Fatal("callers got different tokens")
		}
	}
}

// TestRefreshFailures drives each kind of token endpoint failure and checks
// the documented health state, and that no log line carries a credential.
func TestRefreshFailures(t *testing.T) {
	cases := []struct {
		name      string
		answer    func(w http.ResponseWriter, r *http.Request)
		reconnect bool
		code      string
	}{
		{"invalid_grant", func(w http.ResponseWriter, r *http.Request) { oauthErr(w, 400, "invalid_grant") }, true, "invalid_grant"},
		{"invalid_request", func(w http.ResponseWriter, r *http.Request) { oauthErr(w, 400, "invalid_request") }, true, "invalid_request"},
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, true, "http_401"},
		{"401_invalid_client", func(w http.ResponseWriter, r *http.Request) { oauthErr(w, 401, "invalid_client") }, true, "invalid_client"},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, false, "http_500"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, false, "timeout"},
		{"malformed_json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token": "AT-leak`))
		}, false, "malformed_response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.addServer(t, "acme")
			id := e.addConnection(t, "acme")
			logs := &testlog.Buffer{}
			eng := e.engine(t, engineOpts{log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				timing: connectors.Timing{RefreshTimeout: 300 * time.Millisecond, Lease: 2 * time.Second}})
			e.connectExpired(t, eng, id)
			e.ts.mode = func(w http.ResponseWriter, r *http.Request) bool { tc.answer(w, r); return true }
			ctx := context.Background()
			_, err := eng.Resolver().Token(ctx, id)
			conn, gerr := eng.Get(ctx, id)
			if gerr != nil {
				t.Fatal(gerr)
			}
			// The failure is in the audit trail, the platform's doing.
			failed, aerr := audit.List(ctx, e.pool, audit.Filter{ConnectionID: id.String(), Action: audit.ActionRefreshFailed})
			if aerr != nil || len(failed) != 1 || failed[0].Outcome != string(conn.Health.State) ||
				failed[0].Actor != audit.ActorPlatform || failed[0].Tool != "acme" {
				t.Fatalf("refresh failure events: %+v %v", failed, aerr)
			}
			if tc.reconnect {
				var rr *connectors.ErrReconnectRequired
				if !errors.As(err, &rr) || rr.Code != tc.code {
					t.Fatalf("err = %v, want reconnect required (%s)", err, tc.code)
				}
				if conn.Health.State != connectors.HealthReconnectRequired || conn.Status != connectors.StatusDisconnected {
					t.Fatalf("state %s status %s", conn.Health.State, conn.Status)
				}
			} else {
				var rf *connectors.ErrRefreshFailing
				if !errors.As(err, &rf) || rf.Code != tc.code || rf.Attempts != 1 || rf.NextRetryAt.IsZero() {
					t.Fatalf("err = %#v, want refresh failing (%s)", err, tc.code)
				}
				if conn.Health.State != connectors.HealthRefreshFailing || conn.Status != connectors.StatusConnected || conn.Health.Attempts != 1 {
					t.Fatalf("health %+v status %s", conn.Health, conn.Status)
				}
				// Backoff: a second call does not hit the endpoint again.
				before := e.ts.requests.Load()
				if _, err := eng.Resolver().Token(ctx, id); !errors.As(err, &rf) {
					t.Fatalf("second call: %v", err)
				}
				if e.ts.requests.Load() != before {
					t.Fatal("refresh retried inside its backoff")
				}
				// Recovery clears the failure.
				e.ts.mode = nil
				if _, err := eng.Resolver().Refresh(ctx, id); err != nil {
					t.Fatal(err)
				}
				conn, _ = eng.Get(ctx, id)
				if conn.Health.State != connectors.HealthHealthy || conn.Health.Attempts != 0 || conn.Health.LastErrorCode != "" {
					t.Fatalf("after recovery: %+v", conn.Health)
				}
				if _, err := eng.Resolver().Token(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Contains(err.Error(), "AT-") || strings.Contains(err.Error(), "RT-") {
				t.Fatalf("error message leaks: %v", err)
			}
			if !strings.Contains(logs.String(), `"code":"`+tc.code+`"`) {
				t.Errorf("no log line with the failure code %s:\n%s", tc.code, logs.String())
			}
			assertNoSecrets(t, "logs", logs.String(), append(e.ts.allIssued(), "AT-leak", "csecret"))
		})
	}
}

func TestRedisHoldsCiphertextOnly(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{})
	e.connectExpired(t, eng, id)
	if _, err := eng.Resolver().Token(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	rdb, _ := connectors.NewRedisClient(sharedRedisURL)
	defer func() { _ = rdb.Close() }()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "guilds:*"+id.String()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("nothing cached in Redis")
	}
	for _, k := range keys {
		v, err := rdb.Get(ctx, k).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		assertNoSecrets(t, "redis key "+k, v, e.ts.allIssued())
	}
	// A second engine (another replica) is served from the Redis cache.
	eng2 := e.engine(t, engineOpts{})
	c2, err := eng2.Resolver().Token(ctx, id)
	c1, _ := eng.Resolver().Token(ctx, id)
	if err != nil || c2.AccessToken != c1.AccessToken {
		t.Fatalf("replica: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eng := e.engine(t, engineOpts{})
	var ids []string
	want := map[string]string{}
	for _, slug := range []string{"b1", "b2", "b3", "b4", "b5"} {
		e.addServer(t, slug)
		id := e.addConnection(t, slug)
		e.connect(t, eng, id)
		c, err := eng.Resolver().Token(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ids, want[id.String()] = append(ids, id.String()), c.AccessToken
	}
	// A pending login is rotated too.
	if _, err := eng.BeginOAuth(ctx, mustUUID(ids[0]), "http://127.0.0.1:1/cb"); err != nil {
		t.Fatal(err)
	}
	newKey, _ := secret.GenerateKey("k2")
	both, err := secret.ParseKeyring(newKey + "," + e.keys)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sealedSets().Rotate(ctx, e.pool, both, 2, nil)
	if err != nil || st.Of(connectors.CredentialsTable).Resealed != len(ids) || st.Of(connectors.PendingTable).Resealed != 1 {
		t.Fatalf("RotateKeys = %+v, %v", st, err)
	}
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM connection_credentials WHERE key_id <> 'k2'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d rows not rotated", left)
	}
	// Only the new key now: a fresh replica still reads every credential
	// (its Redis copies under k1 are skipped in favour of Postgres).
	e.keys = newKey
	eng2 := e.engine(t, engineOpts{})
	for _, s := range ids {
		c, err := eng2.Resolver().Token(ctx, mustUUID(s))
		if err != nil || c.AccessToken != want[s] {
			t.Fatalf("after rotation %s: %v", s, err)
		}
	}
}

func TestNotInUseNeverTouchesPostgres(t *testing.T) {
	t.Setenv(connectors.ConnectorEnv, "")
	t.Setenv("GMAIL_OAUTH_CLIENT_ID", "")
	eng, err := connectors.New(context.Background(), connectors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if eng.InUse() {
		t.Fatal("in use without any connector")
	}
	if _, err := eng.Resolver().Token(context.Background(), mustUUID("00000000-0000-0000-0000-000000000001")); !errors.Is(err, connectors.ErrNotInUse) {
		t.Fatal(err)
	}
}

func TestInUseWithoutDatabaseFailsLoudly(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/nope?sslmode=disable&connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	kr, _ := secret.ParseKeyring(mustKey())
	ref, _ := connectors.ParseRef("oauth2/x")
	_, err = connectors.New(context.Background(), connectors.Options{DB: pool, Keyring: kr, Connectors: []connectors.Ref{ref}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("err = %q", err)
	}
	_, err = connectors.New(context.Background(), connectors.Options{Keyring: kr, Providers: []connectors.ProviderID{"oauth2"}})
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("no DB: %v", err)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate Register did not panic")
		}
	}()
	connectors.Register(dupProvider{})
}

type dupProvider struct{}

func (dupProvider) ID() connectors.ProviderID { return "oauth2" }
