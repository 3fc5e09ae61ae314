package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"

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
	defer func() { _ = conn.Close(context.Background()) }()
	var users int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users != 0 {
		t.Errorf("%d users left behind", users)
	}
}

// A token minted with --expires is listed with its expiry; revoke ID and
// disable-user ID make access refuse it with their own errors.
func TestTokensListRevokeAndDisable(t *testing.T) {
	url := testdb.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	code, tok, stderr := runCmd(t, "", "tokens", "create", "--admin", "--expires", "30d")
	if code != 0 || !strings.HasPrefix(tok, "gld_") {
		t.Fatalf("create: %d %q %q", code, tok, stderr)
	}
	tok = strings.TrimSpace(tok)
	if code, _, stderr := runCmd(t, "", "tokens", "create", "--admin", "--expires", "30x"); code != 2 || !strings.Contains(stderr, "--expires") {
		t.Fatalf("bad --expires: %d %q", code, stderr)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, err := access.Authenticate(ctx, pool, tok)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd(t, "", "tokens", "list")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "active") || strings.Contains(out, "never") {
		t.Fatalf("list: %d %q", code, out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]

	// Another token of the same user, then the user is disabled.
	code, tok2, _ := runCmd(t, "", "tokens", "create", "--user", p.UserID)
	if code != 0 {
		t.Fatalf("create --user: %d", code)
	}
	if code, _, _ := runCmd(t, "", "tokens", "disable-user", p.UserID); code != 0 {
		t.Fatalf("disable-user: %d", code)
	}
	if _, err := access.Authenticate(ctx, pool, strings.TrimSpace(tok2)); !errors.Is(err, access.ErrUserDisabled) {
		t.Fatalf("disabled user's token: %v", err)
	}
	if code, _, _ := runCmd(t, "", "tokens", "enable-user", p.UserID); code != 0 {
		t.Fatalf("enable-user: %d", code)
	}
	if code, out, stderr := runCmd(t, "", "tokens", "revoke", id); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %d %q %q", code, out, stderr)
	}
	if _, err := access.Authenticate(ctx, pool, tok); !errors.Is(err, access.ErrTokenRevoked) {
		t.Fatalf("revoked token: %v", err)
	}
	if _, err := access.Authenticate(ctx, pool, strings.TrimSpace(tok2)); err != nil {
		t.Fatalf("the other token of an enabled user: %v", err)
	}
	if code, _, stderr := runCmd(t, "", "tokens", "revoke", "nope"); code != 1 || !strings.Contains(stderr, "no token has id") {
		t.Fatalf("unknown id: %d %q", code, stderr)
	}
}
