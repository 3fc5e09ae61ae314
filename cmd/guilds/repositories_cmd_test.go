package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/testdb"
)

// TestRepositoriesCommand adds, lists and removes a guild's extra git URL,
// and refuses a URL with a password as the API does.
func TestRepositoriesCommand(t *testing.T) {
	url := testdb.URL(t)
	t.Setenv("DATABASE_URL", url)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var guild string
	if err := conn.QueryRow(context.Background(), `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('O', 'o') RETURNING id)
INSERT INTO guilds (organisation_id, name) SELECT id, 'G' FROM o RETURNING id::text`).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "", "repositories", "add", "-guild", guild, "-url", "https://u:p@git.example.com/a/b.git"); code != 1 || !strings.Contains(stderr, "url must not carry a user or password") {
		t.Fatalf("a password in the URL: %d %q", code, stderr)
	}
	code, out, stderr := runCmd(t, "", "repositories", "add", "-guild", guild, "-url", "https://git.example.com/a/tools.git")
	if code != 0 || !strings.Contains(out, "added tools") {
		t.Fatalf("add: %d %q %q", code, out, stderr)
	}
	id := strings.TrimSpace(out[strings.LastIndex(out, " as ")+4:])
	if code, out, _ := runCmd(t, "", "repositories", "list", "-guild", guild); code != 0 || !strings.Contains(out, "https://git.example.com/a/tools.git") || !strings.Contains(out, "extra") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out, stderr := runCmd(t, "", "repositories", "remove", "-guild", guild, id); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("remove: %d %q %q", code, out, stderr)
	}
}
