package audit_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/testdb"
)

// A login's event is placed under its owner's organisation and guild, and a
// browser login's finish names the user who started it.
func TestRecordLoginPlacesTheEvent(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	var org, guild, agent, user, conn string
	for _, q := range []struct {
		dst  *string
		sql  string
		args []any
	}{
		{&org, `INSERT INTO organisations (name, slug) VALUES ('a', 'a') RETURNING id`, nil},
		{&guild, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'g') RETURNING id`, []any{&org}},
		{&agent, `INSERT INTO agents (guild_id, name) VALUES ($1, 'x') RETURNING id`, []any{&guild}},
		{&user, `INSERT INTO users (name) VALUES ('ann') RETURNING id`, nil},
		{&conn, `WITH s AS (INSERT INTO mcp_servers (slug, name, transport, auth) VALUES ('linear', 'Linear', 'http', 'oauth') RETURNING id)
			INSERT INTO mcp_connections (server_id, owner_scope, owner_id, account_hint) SELECT id, 'agent', $1, 'ann@acme' FROM s RETURNING id`, []any{&agent}},
	} {
		args := make([]any, len(q.args))
		for i, a := range q.args {
			args[i] = *a.(*string)
		}
		if err := db.QueryRow(ctx, q.sql, args...).Scan(q.dst); err != nil {
			t.Fatal(err)
		}
	}
	if err := audit.RecordLogin(ctx, db, conn, audit.ActionRefreshFailed, "refresh_failing", audit.ActorPlatform); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO connection_oauth_starts (connection_id, user_id, browser_hash) VALUES ($1, $2, '\x00')`, conn, user); err != nil {
		t.Fatal(err)
	}
	if err := audit.RecordLogin(ctx, db, conn, audit.ActionConnect, "connected", ""); err != nil {
		t.Fatal(err)
	}
	got, err := audit.List(ctx, db, audit.Filter{Orgs: []string{org}})
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	c, f := got[0], got[1]
	if c.Actor != "user:"+user || f.Actor != audit.ActorPlatform || c.GuildID != guild || c.AgentID != agent ||
		c.Tool != "linear" || c.LoginScope != "agent" || c.AccountHint != "ann@acme" || f.Outcome != "refresh_failing" {
		t.Fatalf("events: %+v", got)
	}
	// A login that is gone records nothing and fails nothing.
	if err := audit.RecordLogin(ctx, db, "00000000-0000-0000-0000-000000000001", audit.ActionConnect, "connected", ""); err != nil {
		t.Fatal(err)
	}
}
