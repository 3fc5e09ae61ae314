package api_test

import (
	"testing"
)

// A platform login acts with the box's credential: an operator cannot switch
// on below the platform scope a tool of it that the instance admin has off
// there (the direct Test call is the admin's alone), but may with a login of
// their own.
func TestOperatorCannotWidenAPlatformLoginsGrant(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, agent := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-platform"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	me.platformKeyLogin(t, "etherscan", "eth-platform")
	if r := me.Admin("PUT", "/api/bindings", map[string]any{"scope": "platform", "catalog_kind": "mcp", "catalog_id": "etherscan", "enabled": true}); r.Status != 200 {
		t.Fatalf("platform on: %d %s", r.Status, r.Body)
	}
	if r := me.Admin("PUT", "/api/bindings", map[string]any{"scope": "platform", "catalog_kind": "mcp_tool", "catalog_id": "etherscan_echo", "enabled": false}); r.Status != 200 {
		t.Fatalf("platform echo off: %d %s", r.Status, r.Body)
	}
	op := me.Operator(org)
	before := me.Count("bindings")
	for _, scope := range []map[string]any{{"scope": "organisation", "scope_id": org}, {"scope": "agent", "scope_id": agent}} {
		body := map[string]any{"catalog_kind": "mcp_tool", "catalog_id": "etherscan_echo", "enabled": true}
		for k, v := range scope {
			body[k] = v
		}
		if r := me.Do(op, "PUT", "/api/bindings", body); r.Status != 403 || r.ErrorCode() != "platform_grant" {
			t.Fatalf("operator widens the platform login at %v: %d %s", scope["scope"], r.Status, r.Body)
		}
	}
	if me.Count("bindings") != before {
		t.Fatal("a refused binding was written")
	}
	// What the admin granted stays the operator's to switch.
	if r := me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org, "catalog_kind": "mcp_tool", "catalog_id": "etherscan_pages_search", "enabled": true}); r.Status != 200 {
		t.Fatalf("operator switches a granted tool: %d %s", r.Status, r.Body)
	}
	// With a login of their own, the operator decides.
	if r := me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-platform"}); r.Status != 200 {
		t.Fatalf("own login: %d %s", r.Status, r.Body)
	}
	if r := me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org, "catalog_kind": "mcp_tool", "catalog_id": "etherscan_echo", "enabled": true}); r.Status != 200 {
		t.Fatalf("operator with an own login: %d %s", r.Status, r.Body)
	}
}
