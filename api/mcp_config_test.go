package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/configured"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
)

// acmeConfig: a secret workspace header and a region header that is not a
// secret.
const acmeConfig = `{"provider":"config","fields":[
	{"name":"workspace","label":"Workspace id","header":"X-Workspace"},
	{"name":"region","header":"X-Region","secret":false,"optional":true}]}`

const acmeWorkspace = "ws-acme-7d41c0e9"

type acmeHeaders struct{}

// acmeServer is a real MCP server that serves only requests carrying the
// accepted workspace; its whoami tool echoes the configured headers.
func acmeServer(t *testing.T) string {
	s := echoServer()
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h, _ := ctx.Value(acmeHeaders{}).(http.Header)
		return mcp.NewToolResultText(fmt.Sprintf("workspace %s in region %s", h.Get("X-Workspace"), h.Get("X-Region"))), nil
	})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, acmeHeaders{}, r.Header.Clone())
		}))
	return newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Workspace") != acmeWorkspace {
			http.Error(w, "unknown workspace "+r.Header.Get("X-Workspace"), http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// newConfigEnv is the API with an engine loading the OAuth and the config
// providers, logging into logs.
func newConfigEnv(t *testing.T, logs *strings.Builder, mu *sync.Mutex) *mcpEnv {
	t.Helper()
	me := &mcpEnv{}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(lockedWriter{mu, logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	me.Env = apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		d.Log = log
		eng, err := connectors.New(context.Background(), connectors.Options{DB: d.DB, Keyring: kr, Logger: log,
			Providers: []connectors.ProviderID{"oauth2", "config"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		me.Engine = eng
		me.Pool = mcppool.New(mcppool.Options{DB: d.DB, Credentials: eng.Resolver(), Log: log})
		t.Cleanup(me.Pool.Close)
		me.Adapters = host.New(host.Options{DB: d.DB, Credentials: eng.Resolver(), Log: log})
		d.MCP = api.MCPDeps{Engine: eng, Pool: me.Pool, Adapters: me.Adapters, Keyring: kr}
	}})
	return me
}

func problemFields(r apitest.Response) map[string]string {
	var body struct {
		Error struct {
			Problems []struct{ Field, Message string }
		}
	}
	r.JSON(&body)
	out := map[string]string{}
	for _, p := range body.Error.Problems {
		out[p.Field] = p.Message
	}
	return out
}

func TestConfigServerConnect(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	me := newConfigEnv(t, &logs, &mu)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "acme", acmeServer(t), "none", acmeConfig)
	connect := func(body map[string]any) apitest.Response {
		body["slug"], body["owner_scope"], body["owner_id"] = "acme", "organisation", org
		return me.Admin("POST", "/api/mcp/connect", body)
	}
	nothingLeft := func(what string) {
		t.Helper()
		if connectionstest.Count(t, me.DB) != 0 || me.Count("connection_credentials") != 0 || me.Count("bindings") != 0 {
			t.Fatalf("%s left a login behind", what)
		}
	}

	// Every missing or unknown value is named, and nothing is left behind.
	r := connect(map[string]any{"values": map[string]string{"region": "eu-west-1", "colour": acmeWorkspace}})
	if p := problemFields(r); r.Status != 422 || len(p) != 2 || p["values.workspace"] != "is required" || !strings.Contains(p["values.colour"], "not a field") ||
		strings.Contains(string(r.Body), acmeWorkspace) || strings.Contains(string(r.Body), "eu-west-1") {
		t.Fatalf("missing and unknown values: %d %s", r.Status, r.Body)
	}
	nothingLeft("missing values")
	r = connect(map[string]any{})
	if p := problemFields(r); r.Status != 422 || p["values.workspace"] != "is required" {
		t.Fatalf("no values: %d %s", r.Status, r.Body)
	}
	// A key is not how this server connects.
	r = connect(map[string]any{"key": "k", "values": map[string]string{"workspace": acmeWorkspace}})
	if p := problemFields(r); r.Status != 422 || p["key"] == "" {
		t.Fatalf("a key for a config server: %d %s", r.Status, r.Body)
	}
	// Values the server refuses: 422, nothing stored, the value not quoted.
	r = connect(map[string]any{"values": map[string]string{"workspace": "ws-wrong-0000"}})
	if r.Status != 422 || r.ErrorCode() != "config_rejected" || strings.Contains(string(r.Body), "ws-wrong") {
		t.Fatalf("refused values: %d %s", r.Status, r.Body)
	}
	nothingLeft("refused values")

	r = connect(map[string]any{"values": map[string]string{"workspace": acmeWorkspace, "region": "eu-west-1"}})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	conn := m["connection"].(map[string]any)
	if conn["status"] != "connected" || m["tools"] != float64(3) || conn["account_hint"] != "" {
		t.Fatalf("connected reply %s", r.Body)
	}
	id := conn["id"].(string)
	var enabled bool
	if err := me.DB.QueryRow(context.Background(), `SELECT enabled FROM bindings WHERE connection_id = $1 AND catalog_kind = 'mcp'`, id).Scan(&enabled); err != nil || !enabled {
		t.Fatalf("binding: %v %v", enabled, err)
	}

	// The server saw both headers; the secret one is redacted from the result,
	// the region (declared not secret) is not.
	st, res := me.call(t, id, "whoami", `{}`)
	if st != 200 || res["result"] != "workspace [REDACTED] in region eu-west-1" {
		t.Fatalf("call: %d %v", st, res)
	}
	if st, res := me.call(t, id, "acme_echo", `{"text":"hi"}`); st != 200 || res["result"] != "echo: hi" {
		t.Fatalf("echo: %d %v", st, res)
	}

	// The values never come back: not in the login, the catalog or its tools.
	for _, path := range []string{"/api/mcp/connections/" + id, "/api/mcp/connections", "/api/mcp/servers", "/api/mcp/connections/" + id + "/tools"} {
		if r := me.Admin("GET", path, nil); r.Status != 200 || strings.Contains(string(r.Body), acmeWorkspace) {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	// A connected login at the same scope is a conflict.
	if r := connect(map[string]any{"values": map[string]string{"workspace": acmeWorkspace}}); r.Status != 409 {
		t.Fatalf("second connect: %d %s", r.Status, r.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), acmeWorkspace) || strings.Contains(logs.String(), "ws-wrong") {
		t.Fatalf("a value reached the log:\n%s", logs.String())
	}
}

// values belong to config servers only; a no-auth server without a config
// provider needs no login and takes none.
func TestValuesOnlyForConfigServers(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	me := newConfigEnv(t, &logs, &mu)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "cigale", keyServer(t, "Authorization", "Bearer c-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	addServer(t, me.DB, "open", newHTTPServer(t, server.NewStreamableHTTPServer(echoServer())), "none", `{}`)

	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "cigale", "owner_scope": "organisation", "owner_id": org,
		"key": "c-good", "values": map[string]string{"workspace": "x"}})
	if p := problemFields(r); r.Status != 422 || p["values"] == "" {
		t.Fatalf("values for a token server: %d %s", r.Status, r.Body)
	}
	// A no-auth server without a config provider needs no login: values are
	// refused, and Connect with none turns it on (ADR 0616).
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "open", "owner_scope": "organisation", "owner_id": org,
		"values": map[string]string{"workspace": "x"}})
	if p := problemFields(r); r.Status != 422 || p["values"] == "" {
		t.Fatalf("values for a plain no-auth server: %d %s", r.Status, r.Body)
	}
	// A row whose fields the provider refuses says why.
	addServer(t, me.DB, "broken", acmeServer(t), "none", `{"provider":"config","fields":[{"name":"workspace","heder":"X-Workspace"}]}`)
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "broken", "owner_scope": "organisation", "owner_id": org,
		"values": map[string]string{"workspace": acmeWorkspace}})
	if r.Status != 422 || r.ErrorCode() != "catalog_config" || !strings.Contains(string(r.Body), "heder") ||
		strings.Contains(string(r.Body), acmeWorkspace) {
		t.Fatalf("broken row: %d %s", r.Status, r.Body)
	}
	if connectionstest.Count(t, me.DB) != 0 {
		t.Fatal("a refused connect left a login behind")
	}
}

// The catalog editor refuses a config row whose fields the provider would
// refuse at start-up, naming the problems, and writes nothing.
func TestCatalogRefusesABrokenConfigRow(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	before := e.Count("mcp_servers")
	r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "none",
		"url": "https://mcp.acme.test/mcp", "config": map[string]any{"provider": "config",
			"fields": []map[string]any{{"name": "workspace"}, {"name": "path", "env": "PATH"}}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"config"`) || !strings.Contains(string(r.Body), "workspace") {
		t.Fatalf("broken row: %d %s", r.Status, r.Body)
	}
	if n := e.Count("mcp_servers"); n != before {
		t.Fatalf("mcp_servers went from %d to %d", before, n)
	}
	r = e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "none",
		"url": "https://mcp.acme.test/mcp", "config": map[string]any{"provider": "config",
			"fields": []map[string]any{{"name": "workspace", "header": "X-Workspace"}}}})
	if r.Status != 201 {
		t.Fatalf("good row: %d %s", r.Status, r.Body)
	}
}

// config.elicitation takes "decline", "defaults" or "person" only, and
// config.input_wait_seconds a bounded wait.
func TestCatalogRefusesAnUnknownElicitationPolicy(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "forms", "name": "Forms", "transport": "http", "auth": "none",
		"url": "https://mcp.forms.test/mcp", "config": map[string]any{"elicitation": "accept"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"config.elicitation"`) {
		t.Fatalf("elicitation accept: %d %s", r.Status, r.Body)
	}
	r = e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "forms", "name": "Forms", "transport": "http", "auth": "none",
		"url": "https://mcp.forms.test/mcp", "config": map[string]any{"elicitation": "defaults"}})
	if r.Status != 201 {
		t.Fatalf("elicitation defaults: %d %s", r.Status, r.Body)
	}
	r = e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "asks", "name": "Asks", "transport": "http", "auth": "none",
		"url": "https://mcp.asks.test/mcp", "config": map[string]any{"elicitation": "person", "input_wait_seconds": 7200}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"config.input_wait_seconds"`) {
		t.Fatalf("a two-hour wait: %d %s", r.Status, r.Body)
	}
	r = e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "asks", "name": "Asks", "transport": "http", "auth": "none",
		"url": "https://mcp.asks.test/mcp", "config": map[string]any{"elicitation": "person", "input_wait_seconds": 900}})
	if r.Status != 201 {
		t.Fatalf("elicitation person: %d %s", r.Status, r.Body)
	}
}
