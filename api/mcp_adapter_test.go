package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connections/connectionstest"
)

// echoAdapter answers with the key it was given, so the test can see the
// result pipeline redact it; /ping accepts one key.
type echoAdapter struct{}

func (echoAdapter) Name() string { return "test_echo" }

func (echoAdapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	return "test account", c.GetJSON(ctx, "/ping", nil, http.Header{"X-Key": {c.Cred.AccessToken}}, nil)
}

func (echoAdapter) Call(_ context.Context, c adapters.Conn, tool string, args json.RawMessage) (string, error) {
	t := adapters.NewTable("tool", "args", "key")
	t.Add(tool, string(args), c.Cred.AccessToken)
	return t.String(), nil
}

func init() { adapters.Register(echoAdapter{}) }

// Connect and the Tools view's Test call reach a local adapter through the
// same routes as a token MCP server: a refused key is key_rejected and leaves
// nothing, a good key connects with the catalog's tools, and a call's result
// is redacted against the stored key.
func TestAdapterConnectAndTestCall(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	svc := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != "ek-good-0123456789" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	ctx := context.Background()
	addServer(t, me.DB, "echoer", svc, "token", `{"adapter":"test_echo"}`)
	addServer(t, me.DB, "ghost", svc, "token", `{"adapter":"not_shipped"}`)
	if _, err := me.DB.Exec(ctx, `UPDATE mcp_servers SET kind = 'adapter' WHERE slug IN ('echoer', 'ghost')`); err != nil {
		t.Fatal(err)
	}
	if _, err := me.DB.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT id, 'say', 'Say it', '{"type":"object","properties":{"text":{"type":"string"}}}', 0 FROM mcp_servers WHERE slug = 'echoer'`); err != nil {
		t.Fatal(err)
	}

	// The catalog says which adapters this build ships.
	for slug, want := range map[string]bool{"echoer": true, "ghost": false} {
		if got := me.Admin("GET", "/api/admin/mcp/servers/"+slug, nil).Map()["available"]; got != want {
			t.Errorf("%s available = %v, want %v", slug, got, want)
		}
	}
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "echoer", "owner_scope": "organisation", "owner_id": org, "key": "ek-bad-0123456789"})
	if r.Status != 422 || r.ErrorCode() != "key_rejected" {
		t.Fatalf("bad key: %d %s", r.Status, r.Body)
	}
	if n := connectionstest.Count(t, me.DB) + me.Count("connection_credentials"); n != 0 {
		t.Fatalf("a rejected key left %d rows", n)
	}
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "ghost", "owner_scope": "organisation", "owner_id": org, "key": "any-key-0123"})
	if r.Status != 422 || r.ErrorCode() != "adapter_unavailable" {
		t.Fatalf("adapter not shipped: %d %s", r.Status, r.Body)
	}
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "echoer", "owner_scope": "organisation", "owner_id": org, "key": "ek-good-0123456789"})
	if r.Status != 200 || r.Map()["tools"] != float64(1) || strings.Contains(string(r.Body), "ek-good") {
		t.Fatalf("good key: %d %s", r.Status, r.Body)
	}
	conn := r.Map()["connection"].(map[string]any)
	if conn["status"] != "connected" || conn["account_hint"] != "test account" {
		t.Fatalf("connection %v", conn)
	}
	st, res := me.call(t, conn["id"].(string), "say", `{"text":"hi"}`)
	out, _ := res["result"].(string)
	if st != 200 || !strings.HasPrefix(out, "tool\targs\tkey\nsay\t") || strings.Contains(out, "ek-good") || !strings.Contains(out, "[REDACTED]") {
		t.Fatalf("test call: %d %v", st, res)
	}
}
