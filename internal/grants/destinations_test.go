package grants_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/validation"
)

// A catalog row whose logins hold credentials cannot move to another host
// (their tokens would follow); a path change on the same host can, and so
// can any change once no login holds a credential.
func TestCatalogHostChangeRefusedWhileLoginsHoldCredentials(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	slug := "mover"
	cfg := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c","auth_url":"https://as.example/a","token_url":"https://as.example/t"}}`)
	s, err := grants.CreateServer(ctx, db, nil, grants.ServerInput{Slug: &slug, Name: &slug, Transport: str("http"),
		Auth: auth("oauth"), URL: str("https://mcp.example/mcp"), Config: cfg}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn := connectionstest.InsertAs(t, db, s.ID, "platform", "", connstore.StatusConnected)
	if _, err := db.Exec(ctx, `INSERT INTO connection_credentials (connection_id, key_id, ciphertext) VALUES ($1, 'k1', '\x01')`, conn); err != nil {
		t.Fatal(err)
	}
	field := func(err error) string {
		var ve *validation.Error
		if !errors.As(err, &ve) || len(ve.Problems) != 1 {
			return ""
		}
		return ve.Problems[0].Field
	}
	if _, err := grants.UpdateServer(ctx, db, nil, s.ID, grants.ServerInput{URL: str("https://evil.example/mcp")}, nil, nil); field(err) != "url" {
		t.Fatalf("host change with a login = %v, want refused on url", err)
	}
	moved := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c","auth_url":"https://as.example/a","token_url":"https://evil.example/t"}}`)
	if _, err := grants.UpdateServer(ctx, db, nil, s.ID, grants.ServerInput{Config: moved}, nil, nil); field(err) != "config.oauth.token_url" {
		t.Fatalf("token host change with a login = %v, want refused on config.oauth.token_url", err)
	}
	if _, err := grants.UpdateServer(ctx, db, nil, s.ID, grants.ServerInput{URL: str("https://mcp.example/v2/mcp")}, nil, nil); err != nil {
		t.Fatalf("path change on the same host: %v", err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM connection_credentials`); err != nil {
		t.Fatal(err)
	}
	if _, err := grants.UpdateServer(ctx, db, nil, s.ID, grants.ServerInput{URL: str("https://new.example/mcp"), Config: moved}, nil, nil); err != nil {
		t.Fatalf("host change without credentials: %v", err)
	}
}
