package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
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
	addServer(t, me.DB, "opensea", keyServer(t, "X-API-KEY", "os-good", "get_instant_api_key", "manage_profile"), "token", `{"header":"X-API-KEY"}`)

	// A rejected key is a 422 and leaves nothing behind.
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-bad"})
	if r.Status != 422 || r.ErrorCode() != "key_rejected" || strings.Contains(string(r.Body), "eth-bad") {
		t.Fatalf("bad key: %d %s", r.Status, r.Body)
	}
	if me.Count("mcp_connections") != 0 || me.Count("connection_credentials") != 0 {
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
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "opensea", "owner_scope": "organisation", "owner_id": org, "key": "os-good"})
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
	if r.Status != 422 || r.ErrorCode() != "key_rejected" || me.Count("mcp_connections") != 0 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
