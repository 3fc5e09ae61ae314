package api_test

import (
	"testing"
)

// TestSpendOverlayBelongsToItsLogin: a Wallet login whose send was turned On
// is deleted and another is connected at the same scope; the new login's send
// starts Off, because an overlay belongs to the login it was written for.
func TestSpendOverlayBelongsToItsLogin(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "wallet", keyServer(t, "X-API-KEY", "wallet-good-key", "send"), "token", `{"header":"X-API-KEY"}`)

	connect := func() string {
		t.Helper()
		r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "wallet", "owner_scope": "organisation", "owner_id": org, "key": "wallet-good-key"})
		if r.Status != 200 {
			t.Fatalf("connect: %d %s", r.Status, r.Body)
		}
		return r.Map()["connection"].(map[string]any)["id"].(string)
	}
	sendState := func() (send, echo bool) {
		t.Helper()
		r := me.Admin("GET", "/api/orgs/"+org+"/tools", nil)
		if r.Status != 200 {
			t.Fatalf("view: %d %s", r.Status, r.Body)
		}
		for _, s := range r.Map()["servers"].([]any) {
			sv := s.(map[string]any)
			if sv["slug"] != "wallet" {
				continue
			}
			for _, tl := range sv["tools"].([]any) {
				tv := tl.(map[string]any)
				switch tv["name"] {
				case "wallet_send":
					send = tv["enabled"].(bool)
				case "wallet_echo":
					echo = tv["enabled"].(bool)
				}
			}
		}
		return send, echo
	}

	first := connect()
	if send, echo := sendState(); send || !echo {
		t.Fatalf("first login: send %v echo %v, want send off and echo on", send, echo)
	}
	if r := me.Admin("PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
		"catalog_kind": "mcp_tool", "catalog_id": "wallet_send", "enabled": true}); r.Status != 200 {
		t.Fatalf("turn send on: %d %s", r.Status, r.Body)
	}
	if send, _ := sendState(); !send {
		t.Fatal("send did not turn on")
	}
	if r := me.Admin("DELETE", "/api/mcp/connections/"+first, nil); r.Status != 204 {
		t.Fatalf("delete login: %d %s", r.Status, r.Body)
	}
	connect()
	if send, echo := sendState(); send || !echo {
		t.Fatalf("replacement login: send %v echo %v, want send off and echo on", send, echo)
	}
}
