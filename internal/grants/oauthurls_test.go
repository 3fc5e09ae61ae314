package grants_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/validation"
)

// A catalog row's config.oauth endpoints are checked by the outbound policy
// when the admin saves the row, each refusal naming its field.
func TestCatalogOAuthURLsCheckedOnSave(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	strict := func(raw string) error { _, err := mcpoauth.Policy{}.Check(raw); return err }
	slug := "acme"
	cfg := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c",
		"auth_url":"https://auth.example.com/authorize",
		"token_url":"https://10.0.0.1/token",
		"revoke_url":"http://169.254.169.254/revoke",
		"userinfo_url":"https://localhost/userinfo"}}`)
	_, err := grants.CreateServer(ctx, db, nil, grants.ServerInput{Slug: &slug, Name: &slug, Transport: str("http"),
		Auth: auth("oauth"), URL: str("https://mcp.example.com/mcp"), Config: cfg}, strict, nil)
	var ve *validation.Error
	if !errors.As(err, &ve) {
		t.Fatalf("CreateServer = %v, want a validation error", err)
	}
	fields := map[string]bool{}
	for _, p := range ve.Problems {
		fields[p.Field] = true
	}
	for _, f := range []string{"config.oauth.token_url", "config.oauth.revoke_url", "config.oauth.userinfo_url"} {
		if !fields[f] {
			t.Errorf("no problem for %s in %v", f, err)
		}
	}
	if fields["config.oauth.auth_url"] {
		t.Errorf("a public https auth_url was refused: %v", err)
	}

	ok := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c","auth_url":"https://auth.example.com/a","token_url":"https://auth.example.com/t"}}`)
	s, err := grants.CreateServer(ctx, db, nil, grants.ServerInput{Slug: &slug, Name: &slug, Transport: str("http"),
		Auth: auth("oauth"), URL: str("https://mcp.example.com/mcp"), Config: ok}, strict, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c","auth_url":"https://auth.example.com/a","token_url":"https://metadata.google.internal/t"}}`)
	_, err = grants.UpdateServer(ctx, db, nil, s.ID, grants.ServerInput{Config: bad}, strict, nil)
	if err == nil || !strings.Contains(err.Error(), "config.oauth.token_url") {
		t.Fatalf("UpdateServer = %v, want config.oauth.token_url refused", err)
	}
}
