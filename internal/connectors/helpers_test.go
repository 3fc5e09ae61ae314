package connectors_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// sharedRedisURL is the machine's Redis; tests only touch keys of their own
// fresh connection ids.
const sharedRedisURL = "redis://127.0.0.1:6379/5"

// tokenServer is a fake OAuth token endpoint speaking the real wire format,
// with refresh-token rotation and reuse detection: presenting a refresh token
// that was already used revokes the whole grant.
type tokenServer struct {
	*httptest.Server
	mu         sync.Mutex
	current    string            // the one valid refresh token
	used       map[string]bool   // spent refresh tokens
	challenges map[string]string // code → PKCE challenge
	revoked    bool
	reuse      bool // a spent refresh token was presented
	expiresIn  int
	issued     []string // every token value issued, for leak checks

	refreshes atomic.Int64 // refresh requests answered with success
	requests  atomic.Int64 // refresh requests received
	// mode, when set, answers refresh requests instead of the normal logic.
	mode func(w http.ResponseWriter, r *http.Request) bool
	// onRequest sees every refresh request before it is answered.
	onRequest func(r *http.Request)
}

func newTokenServer(t testing.TB) *tokenServer {
	ts := &tokenServer{used: map[string]bool{}, challenges: map[string]string{}, expiresIn: 3600}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.handle))
	t.Cleanup(ts.Close)
	return ts
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (ts *tokenServer) issue(w http.ResponseWriter) {
	at, rt := "AT-"+randHex(12), "RT-"+randHex(12)
	ts.current = rt
	ts.issued = append(ts.issued, at, rt)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "refresh_token": rt, "token_type": "bearer", "expires_in": ts.expiresIn})
}

func oauthErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":%q,"error_description":"nope"}`, code)
}

func (ts *tokenServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/revoke" {
		ts.mu.Lock()
		ts.revoked = true
		ts.mu.Unlock()
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthErr(w, 400, "invalid_request")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ch, ok := ts.challenges[r.PostForm.Get("code")]
		delete(ts.challenges, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		ts.revoked, ts.used = false, map[string]bool{}
		ts.issue(w)
	case "refresh_token":
		ts.requests.Add(1)
		if ts.onRequest != nil {
			ts.onRequest(r)
		}
		if ts.mode != nil && ts.mode(w, r) {
			return
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		rt := r.PostForm.Get("refresh_token")
		if ts.used[rt] {
			ts.reuse, ts.revoked = true, true
		}
		if ts.revoked || rt != ts.current {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		ts.used[rt] = true
		ts.refreshes.Add(1)
		ts.issue(w)
	default:
		oauthErr(w, 400, "unsupported_grant_type")
	}
}

func (ts *tokenServer) allIssued() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.issued...)
}

// env is one test's database, keys and token endpoint.
type env struct {
	dbURL string
	pool  *pgxpool.Pool
	keys  string
	ts    *tokenServer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	url := testdb.URL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	k, _ := secret.GenerateKey("k1")
	return &env{dbURL: url, pool: pool, keys: k, ts: newTokenServer(t)}
}

func (e *env) keyring(t testing.TB) *secret.Keyring {
	kr, err := secret.ParseKeyring(e.keys)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// addServer inserts a catalog row using the generic OAuth provider against ts.
func (e *env) addServer(t testing.TB, slug string) {
	t.Helper()
	cfg := fmt.Sprintf(`{"provider":"oauth2","oauth":{"auth_url":%q,"token_url":%q,"revoke_url":%q,"client_id":"cid","client_secret":"csecret","auth_style":"basic"}}`,
		e.ts.URL+"/authorize", e.ts.URL+"/token", e.ts.URL+"/revoke")
	_, err := e.pool.Exec(context.Background(), `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ($1, $1, 'http', 'https://mcp.example/mcp', 'oauth', $2)`, slug, cfg)
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) addConnection(t testing.TB, slug string) uuid.UUID {
	t.Helper()
	return uuid.MustParse(connectionstest.InsertOf(t, e.pool, slug, "platform", ""))
}

type engineOpts struct {
	redisURL string // "" for the shared one, "-" for none
	timing   connectors.Timing
	log      *slog.Logger
	hc       *http.Client
}

func (e *env) engine(t testing.TB, o engineOpts) *connectors.Engine {
	t.Helper()
	eng, err := newEngine(e.dbURL, e.keys, o, e.pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

func newEngine(dbURL, keys string, o engineOpts, pool *pgxpool.Pool) (*connectors.Engine, error) {
	ctx := context.Background()
	if pool == nil {
		var err error
		if pool, err = pgxpool.New(ctx, dbURL); err != nil {
			return nil, err
		}
	}
	kr, err := secret.ParseKeyring(keys)
	if err != nil {
		return nil, err
	}
	var rdb *redis.Client
	switch o.redisURL {
	case "-":
	case "":
		rdb, err = connectors.NewRedisClient(sharedRedisURL)
	default:
		rdb, err = connectors.NewRedisClient(o.redisURL)
	}
	if err != nil {
		return nil, err
	}
	log := o.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return connectors.New(ctx, connectors.Options{DB: pool, Redis: rdb, Keyring: kr, Logger: log,
		Providers: []connectors.ProviderID{"oauth2"}, Timing: o.timing, HTTPClient: o.hc})
}

// connect runs the OAuth login of a connection against ts, as a browser would.
func (e *env) connect(t testing.TB, eng *connectors.Engine, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	authURL, err := eng.BeginOAuth(ctx, id, "http://127.0.0.1:1/callback")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		t.Fatalf("authorization URL lacks PKCE or state: %s", authURL)
	}
	code := "code-" + randHex(4)
	e.ts.mu.Lock()
	e.ts.challenges[code] = q.Get("code_challenge")
	e.ts.mu.Unlock()
	if got, err := eng.CompleteOAuth(ctx, q.Get("state"), code); err != nil || got != id {
		t.Fatalf("CompleteOAuth = %v, %v", got, err)
	}
	if _, err := eng.CompleteOAuth(ctx, q.Get("state"), code); err == nil {
		t.Fatal("state reused")
	}
}

// expire makes the stored credential of id look expired to every engine by
// connecting with a server issuing already-expired tokens.
func (e *env) connectExpired(t testing.TB, eng *connectors.Engine, id uuid.UUID) {
	t.Helper()
	e.ts.mu.Lock()
	e.ts.expiresIn = 1
	e.ts.mu.Unlock()
	e.connect(t, eng, id)
	e.ts.mu.Lock()
	e.ts.expiresIn = 3600
	e.ts.mu.Unlock()
	// The skew of a 1 s token is a quarter of its life, so it is stale only
	// once that life has (nearly) passed.
	time.Sleep(time.Second)
}

func assertNoSecrets(t testing.TB, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains a credential value", where)
			return
		}
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustUUID(s string) uuid.UUID { return uuid.MustParse(s) }

func mustKey() string {
	k, _ := secret.GenerateKey("k1")
	return k
}

func httptestServer(t testing.TB, h http.HandlerFunc) string {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
