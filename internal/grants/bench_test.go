package grants_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
)

// BenchmarkOffered resolves one agent's offer with 50 connected servers,
// 2,000 listed tools and bindings at every level of the chain.
func BenchmarkOffered(b *testing.B) {
	ctx := context.Background()
	db, qc := countingPool(b)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		b.Fatal(err)
	}
	org, guild, agent := hierarchy(b, db)
	scopes := []struct {
		scope grants.Scope
		id    string
	}{{grants.ScopePlatform, ""}, {grants.ScopeOrganisation, org.ID}, {grants.ScopeGuild, guild.ID}, {grants.ScopeAgent, agent.ID}}
	for i := 0; i < 50; i++ {
		slug := fmt.Sprintf("bench%02d", i)
		if _, err := grants.CreateServer(ctx, db, nil, grants.ServerInput{Slug: &slug, Name: &slug,
			Transport: str("http"), Auth: auth("token")}, nil, nil); err != nil {
			b.Fatal(err)
		}
		owner := scopes[i%4]
		var c connections.Connection
		var err error
		if owner.scope == grants.ScopePlatform {
			// The API refuses platform logins (ErrPlatformReserved); the box may hold them.
			c.ID = connectionstest.InsertOf(b, db, slug, "platform", "")
		} else {
			c, _, err = connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: slug, OwnerScope: owner.scope, OwnerID: owner.id})
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := connections.MarkConnected(ctx, db, c.ID, ""); err != nil {
			b.Fatal(err)
		}
		list := make([]grants.ListedTool, 40)
		for j := range list {
			list[j] = grants.ListedTool{Name: fmt.Sprintf("tool_%02d", j), Description: "a listed tool",
				Schema: []byte(`{"type":"object","properties":{"q":{"type":"string","format":"date"},"n":{"type":"integer"}},"required":["n"]}`)}
		}
		if err := grants.SyncListedTools(ctx, db, c.ID, list); err != nil {
			b.Fatal(err)
		}
		// Overlays at every level: each scope turns a few tools off and on.
		for k, sc := range scopes {
			if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: sc.scope, ScopeID: sc.id,
				CatalogKind: grants.KindMCPTool, CatalogID: grants.ModelName(slug, fmt.Sprintf("tool_%02d", k)), Enabled: no()}); err != nil {
				b.Fatal(err)
			}
			if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: sc.scope, ScopeID: sc.id,
				CatalogKind: grants.KindMCP, CatalogID: slug, Enabled: yes()}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, sc := range scopes[1:] {
		if _, err := bindings.PutBinding(ctx, db, admin, grants.BindingInput{Scope: sc.scope, ScopeID: sc.id,
			CatalogKind: grants.KindNativeTool, CatalogID: "note_get", Enabled: yes()}); err != nil {
			b.Fatal(err)
		}
	}
	svc := grants.NewService(grantstest.Registry(), nil, nil)
	o, err := svc.Offered(ctx, db, agent.ID, grants.TriggerDirect)
	if err != nil {
		b.Fatal(err)
	}
	if len(o.Tools) < 1800 {
		b.Fatalf("offered %d tools", len(o.Tools))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := qc.n.Load()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Offered(ctx, db, agent.ID, grants.TriggerDirect); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(qc.n.Load()-start)/float64(b.N), "queries/op")
	b.ReportMetric(float64(len(o.Tools)), "tools")
}
