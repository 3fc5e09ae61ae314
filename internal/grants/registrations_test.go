package grants_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/testdb"
)

// The clients Connect registered per redirect URI are shown without their
// secrets and survive an admin sending the config back.
func TestRegistrationsRedactedAndKept(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	cfg := `{"provider":"oauth2","dynamic_registration":true,"oauth":{"client_id":"c2","client_secret":"sec-top","registered":true,
		"registrations":{"https://a.example/cb":{"client_id":"c1","client_secret":"sec-a"},"https://b.example/cb":{"client_id":"c2","client_secret":"sec-top"}}}}`
	var id string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('reg', 'Reg', 'http', 'https://mcp.example/mcp', 'oauth', $1) RETURNING id`, cfg).Scan(&id); err != nil {
		t.Fatal(err)
	}
	s, err := grants.GetServer(ctx, db, nil, id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.Config), "sec-") {
		t.Fatalf("shown config holds a client secret: %s", s.Config)
	}
	if _, err := grants.UpdateServer(ctx, db, nil, id, grants.ServerInput{Config: s.Config}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var stored json.RawMessage
	if err := db.QueryRow(ctx, `SELECT config FROM mcp_servers WHERE id = $1`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stored), `"sec-a"`) || !strings.Contains(string(stored), `"c1"`) {
		t.Fatalf("the registrations were lost by an admin save: %s", stored)
	}
}
