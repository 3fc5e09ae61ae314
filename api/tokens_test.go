package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// A revoked or expired token, and every token of a disabled user, is a 401
// with its own code; an operator revokes only their own tokens.
func TestTokensAreRevokedExpiredAndUsersDisabled(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	op := e.Operator(org)
	other := e.Operator(org)

	r := e.Do(op, "POST", "/api/tokens", map[string]any{"name": "laptop", "expires_in": "30d"})
	if r.Status != 201 {
		t.Fatalf("mint: %d %s", r.Status, r.Body)
	}
	var minted struct {
		Token struct {
			ID        string  `json:"id"`
			ExpiresAt *string `json:"expires_at"`
		} `json:"token"`
		Value string `json:"value"`
	}
	r.JSON(&minted)
	if minted.Token.ExpiresAt == nil || !strings.HasPrefix(minted.Value, "gld_") {
		t.Fatalf("minted %s", r.Body)
	}
	if r := e.Do(minted.Value, "GET", "/api/orgs", nil); r.Status != 200 {
		t.Fatalf("fresh token: %d %s", r.Status, r.Body)
	}
	for _, bad := range []string{"30", "0d", "-1h", "30y", "99999999d"} {
		if r := e.Do(op, "POST", "/api/tokens", map[string]any{"name": "x", "expires_in": bad}); r.Status != 422 || !strings.Contains(string(r.Body), "expires_in") {
			t.Errorf("expires_in %q: %d %s", bad, r.Status, r.Body)
		}
	}

	// Another operator neither sees nor revokes it; its owner lists it.
	if r := e.Do(other, "DELETE", "/api/tokens/"+minted.Token.ID, nil); r.Status != 404 {
		t.Fatalf("revoke by another operator: %d %s", r.Status, r.Body)
	}
	if r := e.Do(other, "GET", "/api/tokens", nil); strings.Contains(string(r.Body), minted.Token.ID) {
		t.Fatalf("another operator lists it: %s", r.Body)
	}
	if r := e.Do(op, "GET", "/api/tokens", nil); r.Status != 200 || !strings.Contains(string(r.Body), minted.Token.ID) || strings.Contains(string(r.Body), minted.Value) {
		t.Fatalf("own list: %d %s", r.Status, r.Body)
	}

	// Expired.
	if _, err := e.DB.Exec(context.Background(), `UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, minted.Token.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.Do(minted.Value, "GET", "/api/orgs", nil); r.Status != 401 || r.ErrorCode() != "token_expired" {
		t.Fatalf("expired: %d %s", r.Status, r.Body)
	}
	// Revoked (by the admin, who may revoke any).
	if r := e.Admin("DELETE", "/api/tokens/"+minted.Token.ID, nil); r.Status != 200 || !strings.Contains(string(r.Body), "revoked_at") {
		t.Fatalf("admin revoke: %d %s", r.Status, r.Body)
	}
	if r := e.Do(minted.Value, "GET", "/api/orgs", nil); r.Status != 401 || r.ErrorCode() != "token_revoked" {
		t.Fatalf("revoked: %d %s", r.Status, r.Body)
	}

	// Disabled user: every token refused; enabled again, they work.
	var uid string
	if err := e.DB.QueryRow(context.Background(), `SELECT user_id FROM api_tokens WHERE id = $1`, minted.Token.ID).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	if r := e.Do(op, "POST", "/api/users/"+uid+"/disable", nil); r.Status != 403 {
		t.Fatalf("operator disables: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("POST", "/api/users/"+uid+"/disable", nil); r.Status != 204 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "GET", "/api/orgs", nil); r.Status != 401 || r.ErrorCode() != "user_disabled" {
		t.Fatalf("disabled user: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("POST", "/api/users/"+uid+"/enable", nil); r.Status != 204 {
		t.Fatalf("enable: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "GET", "/api/orgs", nil); r.Status != 200 {
		t.Fatalf("enabled user: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("POST", "/api/users/00000000-0000-4000-8000-000000000000/disable", nil); r.Status != 404 {
		t.Fatalf("unknown user: %d %s", r.Status, r.Body)
	}

	doc := string(e.Admin("GET", "/api/openapi.json", nil).Body)
	for _, path := range []string{`"/api/tokens"`, `"/api/tokens/{id}"`, `"/api/users/{id}/disable"`} {
		if !strings.Contains(doc, path) {
			t.Errorf("openapi lacks %s", path)
		}
	}
}
