package grants_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/testdb"
)

// queryCounter is a pgx tracer that counts the statements sent to PostgreSQL.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func countingPool(tb testing.TB) (*pgxpool.Pool, *queryCounter) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(testdb.URL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	qc := &queryCounter{}
	cfg.ConnConfig.Tracer = qc
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool, qc
}

var admin = access.Principal{Admin: true}

func str(s string) *string { return &s }

func auth(a catalog.Auth) *catalog.Auth { return &a }
func yes() *bool                        { b := true; return &b }
func no() *bool                         { b := false; return &b }

func hierarchy(tb testing.TB, db *pgxpool.Pool) (org orgs.Organisation, g orgs.Guild, a orgs.Agent) {
	tb.Helper()
	ctx := context.Background()
	var err error
	if org, err = orgs.CreateOrg(ctx, db, admin, orgs.OrgInput{Name: str("Acme")}); err != nil {
		tb.Fatal(err)
	}
	if g, err = orgs.CreateGuild(ctx, db, admin, org.ID, orgs.GuildInput{Name: str("Ops")}); err != nil {
		tb.Fatal(err)
	}
	if a, err = orgs.CreateAgent(ctx, db, admin, g.ID, orgs.AgentInput{Name: str("Ann")}, 0); err != nil {
		tb.Fatal(err)
	}
	return
}

func count(tb testing.TB, db *pgxpool.Pool, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestSeedIsIdempotentAndKeepsAdminEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	for i := 0; i < 2; i++ {
		if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM mcp_servers`); n != 16 {
		t.Fatalf("%d servers", n)
	}
	want := map[string]int{"cigale": 10, "coingecko": 8, "wallet": 12, "alchemy": 3, "x": 4, "twitterapi": 10, "qonto": 4,
		"dexpaprika": 7, "gmail": 7, "drive": 8, "notion": 0, "sentry": 0, "opensea": 0, "etherscan": 0, "pinned_prices": 0, "github": 0}
	for slug, n := range want {
		if got := count(t, db, `SELECT count(*) FROM mcp_catalog_tools t JOIN mcp_servers s ON s.id = t.server_id WHERE s.slug = $1`, slug); got != n {
			t.Errorf("%s: %d tools, want %d", slug, got, n)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM bindings WHERE scope = 'platform' AND enabled`); n != 25 {
		t.Fatalf("%d platform seed bindings", n)
	}
	// An admin edit and an operator's change survive a reseed.
	if _, err := grants.UpdateServer(ctx, db, nil, "cigale", grants.ServerInput{Description: str("ours"),
		Tools: &[]grants.CatalogTool{{Name: "only"}}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE bindings SET enabled = false WHERE catalog_id = 'group_post'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM bindings WHERE catalog_id = 'note_get'`); err != nil {
		t.Fatal(err)
	}
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	s, err := grants.GetServer(ctx, db, nil, "cigale")
	if err != nil || s.Description != "ours" || s.CopySource != "admin" || len(s.Tools) != 1 {
		t.Fatalf("admin copy lost: %+v %v", s, err)
	}
	if count(t, db, `SELECT count(*) FROM bindings WHERE catalog_id = 'group_post' AND NOT enabled`) != 1 ||
		count(t, db, `SELECT count(*) FROM bindings WHERE catalog_id = 'note_get'`) != 0 {
		t.Fatal("reseed overrode an operator change")
	}
}

func TestSyncWritesDefaultOffOverlaysOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	org, _, agent := hierarchy(t, db)
	c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: "wallet", OwnerScope: grants.ScopeOrganisation, OwnerID: org.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, db, c.ID, "0xab…cd"); err != nil {
		t.Fatal(err)
	}
	list := []grants.ListedTool{{Name: "get_balance"}, {Name: "send"}}
	if err := grants.SyncListedTools(ctx, db, c.ID, list); err != nil {
		t.Fatal(err)
	}
	svc := grants.NewService(grantstest.Registry(), nil, nil)
	offered := func() map[string]bool {
		o, err := svc.Offered(ctx, db, agent.ID, grants.TriggerDirect)
		if err != nil {
			t.Fatal(err)
		}
		return names(o)
	}
	if got := offered(); !got["wallet_get_balance"] || got["wallet_send"] {
		t.Fatalf("after first sync %v", got)
	}
	// The operator turns send on; a later sync with a new spend tool keeps send on and adds swap off.
	if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: grants.ScopeOrganisation, ScopeID: org.ID,
		CatalogKind: grants.KindMCPTool, CatalogID: "wallet_send", Enabled: yes()}); err != nil {
		t.Fatal(err)
	}
	if err := grants.SyncListedTools(ctx, db, c.ID, append(list, grants.ListedTool{Name: "swap", Schema: json.RawMessage(`{"type":"object"}`)})); err != nil {
		t.Fatal(err)
	}
	if got := offered(); !got["wallet_send"] || got["wallet_swap"] || !got["wallet_get_balance"] {
		t.Fatalf("after second sync %v", got)
	}
	// A sync that drops a tool removes it from mcp_tools.
	if err := grants.SyncListedTools(ctx, db, c.ID, list[:1]); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM mcp_tools WHERE connection_id = $1`, c.ID); n != 1 {
		t.Fatalf("%d listed tools", n)
	}
}

func TestDeletesCascadeBindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	org, guild, agent := hierarchy(t, db)
	put := func(scope grants.Scope, id, kind, cat string) {
		t.Helper()
		if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: scope, ScopeID: id, CatalogKind: kind,
			CatalogID: cat, Enabled: no()}); err != nil {
			t.Fatal(err)
		}
	}
	put(grants.ScopeAgent, agent.ID, grants.KindNativeTool, "note_get")
	put(grants.ScopeGuild, guild.ID, grants.KindNativeTool, "note_get")
	c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: "x", OwnerScope: grants.ScopeGuild, OwnerID: guild.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, db, c.ID, "@acme"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM bindings WHERE connection_id = $1`, c.ID); n != 1 {
		t.Fatalf("MarkConnected wrote %d bindings", n)
	}
	// Deleting the connection takes its binding; deleting the agent takes the agent's.
	if err := connections.DeleteConnection(ctx, db, admin, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := orgs.DeleteAgent(ctx, db, admin, agent.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM bindings WHERE scope <> 'platform'`); n != 1 {
		t.Fatalf("%d bindings left, want the guild's", n)
	}
	// Deleting the guild takes its bindings and its logins.
	if _, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: "x", OwnerScope: grants.ScopeGuild, OwnerID: guild.ID}); err != nil {
		t.Fatal(err)
	}
	if err := orgs.DeleteGuild(ctx, db, admin, guild.ID); err != nil {
		t.Fatal(err)
	}
	if count(t, db, `SELECT count(*) FROM bindings WHERE scope <> 'platform'`) != 0 || connectionstest.Count(t, db) != 0 {
		t.Fatal("guild delete left bindings or logins")
	}
	_ = org
}

func TestOfferedUsesThreeQueriesAndArtifactGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, qc := countingPool(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	_, guild, agent := hierarchy(t, db)
	svc := grants.NewService(grantstest.Registry(), nil, nil)
	for _, slug := range []string{"x", "qonto", "alchemy"} {
		c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: slug, OwnerScope: grants.ScopeGuild, OwnerID: guild.ID})
		if err != nil {
			t.Fatal(err)
		}
		if err := connections.MarkConnected(ctx, db, c.ID, ""); err != nil {
			t.Fatal(err)
		}
		if err := grants.SyncListedTools(ctx, db, c.ID, []grants.ListedTool{{Name: "a"}, {Name: "b"}}); err != nil {
			t.Fatal(err)
		}
	}
	before := qc.n.Load()
	o, err := svc.Offered(ctx, db, agent.ID, grants.TriggerDirect)
	if err != nil {
		t.Fatal(err)
	}
	if q := qc.n.Load() - before; q != 3 {
		t.Fatalf("Offered used %d queries, want 3", q)
	}
	if got := names(o); !got["x_a"] || !got["qonto_b"] || !got["alchemy_a"] || !got["note_get"] {
		t.Fatalf("offered %v", got)
	}
	if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: grants.ScopeGuild, ScopeID: guild.ID,
		CatalogKind: grants.KindArtifactGrant, CatalogID: "write_org", Enabled: yes()}); err != nil {
		t.Fatal(err)
	}
	reach, err := grants.ArtifactGrants(ctx, db, agent.ID)
	if err != nil || reach != (grants.ArtifactReach{ReadGuild: true, ReadOrg: true, WriteGuild: true, WriteOrg: true}) {
		t.Fatalf("reach %+v %v", reach, err)
	}
	// A disconnected login of an enabled server stops the run start.
	cid := connectionstest.OnlyOf(t, db, "x")
	if err := connections.MarkDisconnected(ctx, db, cid); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Offered(ctx, db, agent.ID, grants.TriggerDirect)
	var disc *grants.ErrConnectionDisconnected
	if !asDisc(err, &disc) || disc.ServerSlug != "x" {
		t.Fatalf("want disconnected error, got %v", err)
	}
}

// bindings writes bindings as the API does, checking native tools against
// the catalog of every native family.
var bindings = grants.NewService(grantstest.Registry(), nil, nil)
