package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/testdb"
)

// An --org that names no organisation (a guild's id, or not a uuid at all) gets one
// line saying so, and no user is left behind.
func TestTokensForUnknownOrganisation(t *testing.T) {
	url := testdb.URL(t)
	t.Setenv("DATABASE_URL", url)
	for _, id := range []string{"6f1c2d3e-0000-4000-8000-000000000001", "nope"} {
		code, out, stderr := runCmd(t, "", "tokens", "create", "--org", id)
		if code != 1 || out != "" || !strings.Contains(stderr, "no organisation has id") ||
			strings.Contains(stderr, "fkey") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--org %s: exit %d, stdout %q, stderr %q", id, code, out, stderr)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var users int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users != 0 {
		t.Errorf("%d users left behind", users)
	}
}
