package api_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/guilds/guilds/internal/connections/connectionstest"
)

// A key too short to be redacted from tool results (or a login:secret_key
// key with such a part) is a 422 on the key field: nothing is stored, the
// key is not echoed and the server is never sent it.
func TestConnectRefusesAKeyTooShortToRedact(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	var asked atomic.Int64
	srv := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	addServer(t, me.DB, "etherscan", srv, "token", `{"header":"Authorization","scheme":"Bearer"}`)
	for _, key := range []string{"k3y-5", "acme:0123456789abcdef"} {
		r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": key})
		if p := problemFields(r); r.Status != 422 || !strings.Contains(p["key"], "at least 8 characters") || strings.Contains(string(r.Body), key) {
			t.Fatalf("%q: %d %s", key, r.Status, r.Body)
		}
		if me.Count("connection_credentials") != 0 || connectionstest.Count(t, me.DB) != 0 || asked.Load() != 0 {
			t.Fatalf("%q: a refused key left a login behind or reached the server", key)
		}
	}
}

// A configured login's secret value too short to redact is a 422 on that
// value, with nothing stored.
func TestConfigConnectRefusesASecretValueTooShortToRedact(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	me := newConfigEnv(t, &logs, &mu)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "acme", acmeServer(t), "none", acmeConfig)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "acme", "owner_scope": "organisation", "owner_id": org,
		"values": map[string]string{"workspace": "ws-7", "region": "eu"}})
	if p := problemFields(r); r.Status != 422 || len(p) != 1 || !strings.Contains(p["values.workspace"], "at least 8 characters") || strings.Contains(string(r.Body), "ws-7") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if me.Count("connection_credentials") != 0 || connectionstest.Count(t, me.DB) != 0 {
		t.Fatal("a refused value left a login behind")
	}
}
