package api_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcppool"
)

// platformRow inserts a pending platform-scope login of a catalog server
// straight into the database. The API refuses to create one
// (platform_scope_reserved), but a box may hold them, and the tests of what
// a platform login may do need one.
func platformRow(t *testing.T, db *pgxpool.Pool, slug string) string {
	t.Helper()
	return connectionstest.InsertOf(t, db, slug, "platform", "")
}

// platformKeyLogin is a platform login of a token server connected with a
// key through the engine, the way the connect route does at other scopes
// (listing, connected state, platform binding).
func (me *mcpEnv) platformKeyLogin(t *testing.T, slug, key string) string {
	t.Helper()
	id := platformRow(t, me.DB, slug)
	svc := &connections.Service{DB: me.DB, Engine: me.Engine, Sessions: me.Pool, Checker: mcppool.Checker{DB: me.DB, Engine: me.Engine}}
	if _, err := svc.ConnectKey(context.Background(), id, map[string]string{connectors.MetaTokenField: key}, ""); err != nil {
		t.Fatalf("platform key login of %s: %v", slug, err)
	}
	return id
}
