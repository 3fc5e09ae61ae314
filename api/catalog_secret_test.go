package api_test

import (
	"strings"
	"testing"
)

// Without an encryption key the box cannot seal a client secret, so it
// refuses to store one rather than keep it in clear.
func TestCatalogClientSecretRefusedWithoutKeyring(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "oauth",
		"url": "https://mcp.acme.test/mcp", "config": map[string]any{"provider": "oauth2",
			"oauth": map[string]any{"client_id": "cid", "client_secret": "s3cr3t-client-value"}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"config.oauth.client_secret"`) || strings.Contains(string(r.Body), "s3cr3t") {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if e.Count("mcp_servers WHERE slug = 'acme'") != 0 {
		t.Fatal("a refused row was stored")
	}
}
