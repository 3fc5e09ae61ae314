package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/tools"
)

// keyServer serves a real MCP server to requests whose header carries a good key.
func keyServer(t *testing.T, header, good string, tools ...string) string {
	h := server.NewStreamableHTTPServer(echoServer(tools...), server.WithStateful(true))
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != good {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	return newHTTPServer(t, mux)
}

func TestTokenServersConnect(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	addServer(t, me.DB, "opensea", keyServer(t, "X-API-KEY", "os-good-key", "get_instant_api_key", "manage_profile"), "token", `{"header":"X-API-KEY"}`)

	// A rejected key is a 422 and leaves nothing behind.
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-bad-key"})
	if r.Status != 422 || r.ErrorCode() != "key_rejected" || strings.Contains(string(r.Body), "eth-bad-key") {
		t.Fatalf("bad key: %d %s", r.Status, r.Body)
	}
	if connectionstest.Count(t, me.DB) != 0 || me.Count("connection_credentials") != 0 {
		t.Fatal("a rejected key left a login behind")
	}
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good"})
	if r.Status != 200 {
		t.Fatalf("good key: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	conn := m["connection"].(map[string]any)
	if conn["status"] != "connected" || m["tools"] != float64(2) || strings.Contains(string(r.Body), "eth-good") {
		t.Fatalf("connected reply %s", r.Body)
	}
	st, res := me.call(t, conn["id"].(string), "echo", `{"text":"key eth-good"}`)
	if st != 200 || res["result"] != "echo: key [REDACTED]" && strings.Contains(res["result"].(string), "eth-good") {
		t.Fatalf("call: %d %v", st, res)
	}
	if strings.Contains(res["result"].(string), "eth-good") {
		t.Fatalf("key not redacted: %v", res)
	}

	// OpenSea: X-API-KEY; its risky tools start Off at the owner.
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "opensea", "owner_scope": "organisation", "owner_id": org, "key": "os-good-key"})
	if r.Status != 200 {
		t.Fatalf("opensea: %d %s", r.Status, r.Body)
	}
	var off int
	_ = me.DB.QueryRow(context.Background(), `SELECT count(*) FROM bindings WHERE catalog_kind = 'mcp_tool' AND NOT enabled
AND catalog_id IN ('opensea_get_instant_api_key', 'opensea_manage_profile')`).Scan(&off)
	if off != 2 {
		t.Fatalf("default-off overlays: %d", off)
	}
}

func TestOpenSeaInstantKeyOnlyIsRejected(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	// A server that lists only get_instant_api_key answers an unusable key.
	s := server.NewMCPServer("opensea", "1")
	s.AddTool(mcpTool("get_instant_api_key"), okHandler)
	url := newHTTPServer(t, server.NewStreamableHTTPServer(s))
	addServer(t, me.DB, "opensea", url, "token", `{"header":"X-API-KEY"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "opensea", "owner_scope": "organisation", "owner_id": org, "key": "whatever"})
	if r.Status != 422 || r.ErrorCode() != "key_rejected" || connectionstest.Count(t, me.DB) != 0 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// keyServerWith serves a real MCP server to requests whose header carries
// the current value of good, which the test may change (a revoked key).
func keyServerWith(t *testing.T, header string, good *atomic.Value) string {
	h := server.NewStreamableHTTPServer(echoServer(), server.WithStateful(true))
	return newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != good.Load().(string) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// A key revoked at the provider: the Test call answers 409, the login turns
// disconnected, and Connect then takes a new key over the same login.
func TestRevokedKeyIsReplacedByConnect(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	var good atomic.Value
	good.Store("Bearer old-key-1234")
	addServer(t, me.DB, "cigale", keyServerWith(t, "Authorization", &good), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	connect := func(key string) apitest.Response {
		return me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "cigale", "owner_scope": "organisation", "owner_id": org, "key": key})
	}
	r := connect("old-key-1234")
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	good.Store("Bearer new-key-5678")
	st, m := me.call(t, id, "echo", `{"text":"x"}`)
	if st != 409 || me.status(t, id) != "disconnected" || strings.Contains(fmt.Sprint(m), "old-key-1234") {
		t.Fatalf("revoked key: %d %v status=%s", st, m, me.status(t, id))
	}
	// A wrong key on the retry leaves the login disconnected, bindings intact.
	bindings := me.Count("bindings")
	if r := connect("wrong-key"); r.Status != 422 || r.ErrorCode() != "key_rejected" || me.status(t, id) != "disconnected" || me.Count("bindings") != bindings {
		t.Fatalf("wrong key on retry: %d %s status=%s", r.Status, r.Body, me.status(t, id))
	}
	r = connect("new-key-5678")
	if r.Status != 200 || r.Map()["connection"].(map[string]any)["id"] != id {
		t.Fatalf("reconnect: %d %s", r.Status, r.Body)
	}
	if st, m := me.call(t, id, "cigale_echo", `{"text":"back"}`); st != 200 || m["result"] != "echo: back" {
		t.Fatalf("after reconnect: %d %v", st, m)
	}
}

// The Test call's refusals, and its byte cap.
func TestMCPCallRefusalsAndCap(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	path := "/api/mcp/connections/" + id + "/call"

	for _, c := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"tool":"nope","arguments":{}}`, 422, "tool"},
		{`{"tool":"echo","arguments":[1]}`, 422, "arguments"},
		{`{"tool":"echo","arguments":"text"}`, 422, "arguments"},
		{`{"tool":`, 400, ""},
	} {
		r := me.Admin("POST", path, c.body)
		if r.Status != c.status || !strings.Contains(string(r.Body), c.field) {
			t.Errorf("%s: %d %s", c.body, r.Status, r.Body)
		}
	}
	if r := me.Admin("POST", "/api/mcp/connections/"+uuid.NewString()+"/call", `{"tool":"echo"}`); r.Status != 404 {
		t.Errorf("unknown login: %d %s", r.Status, r.Body)
	}
	// Another organisation's operator does not see the login.
	other := me.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).Map()["id"].(string)
	if r := me.Do(me.Operator(other), "POST", path, `{"tool":"echo","arguments":{"text":"x"}}`); r.Status != 404 {
		t.Errorf("foreign operator: %d %s", r.Status, r.Body)
	}

	// A long result is cut to the platform cap, with the elision note.
	long := strings.Repeat("a", tools.DefaultCap+5000)
	st, m := me.call(t, id, "echo", `{"text":"`+long+`"}`)
	res, _ := m["result"].(string)
	if st != 200 || len(res) > tools.DefaultCap || !strings.HasPrefix(res, "echo: aaa") || strings.Contains(res, "remaining_tool_calls") {
		t.Fatalf("capped call: %d, %d bytes", st, len(res))
	}

	// A pending login cannot be called.
	addServer(t, me.DB, "cigale", keyServer(t, "Authorization", "Bearer c"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	pr := me.Admin("POST", "/api/mcp/connections", map[string]any{"slug": "cigale", "owner_scope": "organisation", "owner_id": org})
	if pr.Status != 201 {
		t.Fatalf("pending login: %d %s", pr.Status, pr.Body)
	}
	if r := me.Admin("POST", "/api/mcp/connections/"+pr.Map()["id"].(string)+"/call", `{"tool":"echo"}`); r.Status != 409 || r.ErrorCode() != "not_connected" {
		t.Errorf("pending login call: %d %s", r.Status, r.Body)
	}
}

// A server that echoes the request in its error: the key reaches neither the
// reply nor the log.
func TestKeyValidationFailureKeepsTheKeyOut(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	me := newMCPEnvLog(t, false, nil, slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)))
	echo := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream failed for "+r.Header.Get("Authorization"), http.StatusBadGateway)
	}))
	addServer(t, me.DB, "etherscan", echo, "token", `{"header":"Authorization","scheme":"Bearer"}`)
	org, _, _ := me.Hierarchy()
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "sk-echoed-1234"})
	mu.Lock()
	defer mu.Unlock()
	if r.Status != 422 || strings.Contains(string(r.Body), "sk-echoed") || strings.Contains(logs.String(), "sk-echoed") ||
		!strings.Contains(logs.String(), "key validation failed") || connectionstest.Count(t, me.DB) != 0 {
		t.Fatalf("%d %s\nlog: %s", r.Status, r.Body, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// With the production outbound policy, a catalog row whose server resolves to
// loopback (or any private address) is refused before the key is sent, with a
// 422 that says how to allow it, and nothing is left behind.
func TestKeyConnectRefusesInternalAddresses(t *testing.T) {
	me := newMCPEnv(t, false, func(d *api.MCPDeps) { d.KeyHTTP = mcpoauth.Policy{}.Client(0) })
	org, _, _ := me.Hierarchy()
	var hits atomic.Int32
	url := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	addServer(t, me.DB, "etherscan", url, "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-key-1234"})
	if r.Status != 422 || r.ErrorCode() != "address_refused" || !strings.Contains(string(r.Body), "GUILDS_OAUTH_ALLOW_PRIVATE") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if hits.Load() != 0 || connectionstest.Count(t, me.DB) != 0 || me.Count("connection_credentials") != 0 {
		t.Fatalf("server hit %d times; a login was left behind", hits.Load())
	}
}
