package connectors_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/configured"
	"github.com/guilds/guilds/internal/testlog"
)

// acmeConfig declares a secret header, a non-secret environment value and an
// optional header.
const acmeConfig = `{"provider":"config","fields":[
	{"name":"workspace","label":"Workspace id","header":"X-Workspace"},
	{"name":"api_base","env":"ACME_API_BASE","secret":false},
	{"name":"region","header":"X-Region","optional":true}]}`

const (
	wsValue   = "ws-secret-5f1c9a"
	baseValue = "https://api.acme.test/v2"
)

// configEnv is a catalog row served by the config provider, with a platform
// connection and an engine loading only that provider.
func configEnv(t *testing.T, cfg string, log *slog.Logger) (*env, *connectors.Engine, uuid.UUID) {
	t.Helper()
	e := newEnv(t)
	if _, err := e.pool.Exec(context.Background(), `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ('acme', 'Acme', 'http', 'https://mcp.acme.test/mcp', 'none', $1)`, cfg); err != nil {
		t.Fatal(err)
	}
	id := e.addConnection(t, "acme")
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rdb, err := connectors.NewRedisClient(sharedRedisURL)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(context.Background(), connectors.Options{DB: e.pool, Redis: rdb, Keyring: e.keyring(t),
		Logger: log, Providers: []connectors.ProviderID{"config"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return e, eng, id
}

func (e *env) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func problems(t *testing.T, err error) map[string]string {
	t.Helper()
	var fe *connectors.FieldsError
	if !errors.As(err, &fe) {
		t.Fatalf("want a *FieldsError, got %v", err)
	}
	out := map[string]string{}
	for _, p := range fe.Problems {
		out[p.Field] = p.Message
	}
	return out
}

func TestConfigConnectChecksEveryFieldAndStoresNothingOnRefusal(t *testing.T) {
	ctx := context.Background()
	logs := &testlog.Buffer{}
	e, eng, id := configEnv(t, acmeConfig, slog.New(slog.NewTextHandler(logs, nil)))

	fields, err := eng.KeyFields(ctx, id)
	if err != nil || len(fields) != 3 || fields[0].Label != "Workspace id" || fields[1].Secret || !fields[2].Optional {
		t.Fatalf("KeyFields = %+v, %v", fields, err)
	}

	// Every missing required field is named at once.
	_, err = eng.ConnectKey(ctx, id, map[string]string{"region": "eu-west-1"})
	if got := problems(t, err); !reflect.DeepEqual(got, map[string]string{"workspace": "is required", "api_base": "is required"}) {
		t.Fatalf("missing fields: %v", got)
	}
	// Unknown fields are refused; a blank value is a missing one; no line breaks.
	_, err = eng.ConnectKey(ctx, id, map[string]string{"workspace": "  ", "api_base": "a\r\nX-Evil: 1", "token": wsValue, "colour": "red"})
	got := problems(t, err)
	if len(got) != 4 || got["workspace"] != "is required" || !strings.Contains(got["api_base"], "line breaks") ||
		!strings.Contains(got["token"], "not a field of acme") || got["colour"] == "" {
		t.Fatalf("refused values: %v", got)
	}
	if strings.Contains(err.Error(), wsValue) || strings.Contains(err.Error(), "X-Evil") {
		t.Fatalf("the error quotes a value: %v", err)
	}
	if n := e.count(t, "connection_credentials"); n != 0 {
		t.Fatalf("%d credentials stored after refusals", n)
	}
	c, _ := eng.Get(ctx, id)
	if c.Status != connectors.StatusPending {
		t.Fatalf("status %s after refusals", c.Status)
	}

	// CheckConfig shapes values without storing them.
	inj, err := eng.CheckConfig(ctx, id, map[string]string{"workspace": wsValue, "api_base": baseValue})
	if err != nil || inj.Headers["X-Workspace"] != wsValue || inj.Env["ACME_API_BASE"] != baseValue || len(inj.Headers) != 1 {
		t.Fatalf("CheckConfig = %v, %v", inj.Headers, err)
	}
	if _, err := eng.CheckConfig(ctx, id, map[string]string{}); len(problems(t, err)) != 2 {
		t.Fatal("CheckConfig accepted missing values")
	}
	if n := e.count(t, "connection_credentials"); n != 0 {
		t.Fatal("CheckConfig stored a credential")
	}

	kv, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": " " + wsValue + " ", "api_base": baseValue, "region": "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if kv.Credential.AccessToken != "" || !kv.Credential.Expiry.IsZero() || kv.Credential.Extra["workspace"] != wsValue || kv.AccountHint != "" {
		t.Fatalf("stored %v (workspace trimmed: %v)", kv.Credential, kv.Credential.Extra["workspace"] == wsValue)
	}
	c, _ = eng.Get(ctx, id)
	if c.Status != connectors.StatusConnected || c.Health.State != connectors.HealthHealthy || c.AccountHint != "" {
		t.Fatalf("after connect: %+v", c)
	}
	assertNoSecrets(t, "the engine's log", logs.String(), []string{wsValue, baseValue, "eu-west-1"})
}

func TestConfigInjectionNeverRefreshes(t *testing.T) {
	ctx := context.Background()
	_, eng, id := configEnv(t, acmeConfig, nil)
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": wsValue, "api_base": baseValue}); err != nil {
		t.Fatal(err)
	}
	res := eng.Resolver()
	inj, err := res.Injection(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inj.Headers, map[string]string{"X-Workspace": wsValue}) ||
		!reflect.DeepEqual(inj.Env, map[string]string{"ACME_API_BASE": baseValue}) || inj.Meta != nil {
		t.Fatalf("injection: %v %v %v", inj.Headers, inj.Env, inj.Meta)
	}
	if env, err := res.Env(ctx, id); err != nil || !slices.Equal(env, []string{"ACME_API_BASE=" + baseValue}) {
		t.Fatalf("Env = %v, %v", env, err)
	}
	if meta, err := res.Meta(ctx, id); err != nil || meta != nil {
		t.Fatalf("Meta = %v, %v", meta, err)
	}

	// The transport sends the provider's headers, and no Authorization.
	var mu sync.Mutex
	var seen http.Header
	url := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	resp, err := (&http.Client{Transport: res.Transport(nil, id)}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	if seen.Get("X-Workspace") != wsValue || seen.Get("Authorization") != "" || seen.Get("X-Region") != "" {
		t.Fatalf("the server saw %v", seen)
	}
	mu.Unlock()
	if h := res.HeaderFunc(id)(ctx); h["X-Workspace"] != wsValue {
		t.Fatalf("HeaderFunc = %v", h)
	}

	// A forced refresh has nothing to refresh: the values stand, health untouched.
	before, _ := eng.Get(ctx, id)
	cred, err := res.Refresh(ctx, id)
	if err != nil || cred.Extra["workspace"] != wsValue || cred.AccessToken != "" {
		t.Fatalf("Refresh = %v, %v", cred, err)
	}
	after, _ := eng.Get(ctx, id)
	if after.Health != before.Health {
		t.Fatalf("health moved on a refresh: %+v → %+v", before.Health, after.Health)
	}
	if err := eng.Test(ctx, id); err != nil {
		t.Fatal(err)
	}

	// New values are served at once; after Disconnect nothing is.
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": "ws-other-77", "api_base": baseValue, "region": "eu-central-1"}); err != nil {
		t.Fatal(err)
	}
	if inj, _ := res.Injection(ctx, id); inj.Headers["X-Workspace"] != "ws-other-77" || inj.Headers["X-Region"] != "eu-central-1" {
		t.Fatalf("after reconnect: %v", inj.Headers)
	}
	if err := eng.Disconnect(ctx, id); err != nil {
		t.Fatal(err)
	}
	var rr *connectors.ErrReconnectRequired
	if _, err := res.Injection(ctx, id); !errors.As(err, &rr) {
		t.Fatalf("after disconnect: %v", err)
	}
}

// Secret fields join the redaction sets; a field declared "secret": false
// does not (it would blank short everyday words out of tool results).
func TestConfigRedactionSetLeavesNonSecretFieldsOut(t *testing.T) {
	ctx := context.Background()
	e, eng, id := configEnv(t, acmeConfig, nil)
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": wsValue, "api_base": baseValue, "region": "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	got, err := eng.Secrets(ctx, id)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"eu-west-1", wsValue}) {
		t.Fatalf("Secrets = %v, %v", got, err)
	}

	var agent string
	if err := e.pool.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('o', 'o') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id)
INSERT INTO agents (guild_id, name) SELECT id, 'a' FROM g RETURNING id::text`).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	run, err := eng.RunSecrets(ctx, agent)
	slices.Sort(run)
	if err != nil || !slices.Equal(run, got) {
		t.Fatalf("RunSecrets = %v, %v (want %v)", run, err, got)
	}
}

func TestConfigRowErrors(t *testing.T) {
	ctx := context.Background()
	e, eng, id := configEnv(t, `{"provider":"config","fields":[{"name":"workspace"}]}`, nil)
	for name, err := range map[string]error{
		"ConnectKey": func() error {
			_, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": wsValue})
			return err
		}(),
		"CheckConfig": func() error { _, err := eng.CheckConfig(ctx, id, map[string]string{"workspace": wsValue}); return err }(),
		"KeyFields":   func() error { _, err := eng.KeyFields(ctx, id); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), "workspace needs a header, an env name or both") || strings.Contains(err.Error(), wsValue) {
			t.Errorf("%s on a broken row: %v", name, err)
		}
	}
	if n := e.count(t, "connection_credentials"); n != 0 {
		t.Fatal("a broken row stored a credential")
	}

	// A row of another provider takes no values.
	e.addServer(t, "notion")
	other := e.addConnection(t, "notion")
	if _, err := eng.CheckConfig(ctx, other, map[string]string{"x": "y"}); !errors.Is(err, connectors.ErrNoConfig) {
		t.Fatalf("CheckConfig on an OAuth row: %v", err)
	}
}

// A token row that declares several keys asks for each of them, every one a
// secret, so the terminal's connect prompts for them all without echo.
func TestKeyFieldsOfAMultiKeyRow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.pool.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ('twokey', 'Two keys', 'http', 'https://api.twokey.test', 'token',
 '{"key_fields":[{"name":"login","label":"Login"},{"name":"secret_key","label":"Secret key"},{"name":"extra","optional":true}]}')`); err != nil {
		t.Fatal(err)
	}
	id := e.addConnection(t, "twokey")
	fields, err := e.engine(t, engineOpts{}).KeyFields(ctx, id)
	want := []connectors.KeyField{{Name: "login", Label: "Login", Secret: true}, {Name: "secret_key", Label: "Secret key", Secret: true},
		{Name: "extra", Secret: true, Optional: true}}
	if err != nil || !reflect.DeepEqual(fields, want) {
		t.Fatalf("KeyFields = %+v, %v", fields, err)
	}
}
