package grants_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/testdb"
)

// A connected listing of a server that publishes from listings becomes its
// catalog copy; an admin-edited copy and a seeded tool list stay as they are.
func TestListingPublishesTheCatalogCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	org, _, _ := hierarchy(t, db)
	login := func(slug string) string {
		c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: slug, OwnerScope: grants.ScopeOrganisation, OwnerID: org.ID})
		if err != nil {
			t.Fatal(err)
		}
		if err := connections.MarkConnected(ctx, db, c.ID, ""); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	published := func(slug string) map[string]string {
		s, err := grants.GetServer(ctx, db, nil, slug)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tl := range s.Tools {
			out[tl.Name] = tl.Description
		}
		return out
	}
	notion := login("notion")
	list := []grants.ListedTool{{Name: "search", Description: "Search pages", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		{Name: "pages.get", Description: "Read a page"}}
	if err := grants.SyncListedTools(ctx, db, notion, list); err != nil {
		t.Fatal(err)
	}
	if got := published("notion"); len(got) != 2 || got["search"] != "Search pages" || got["pages.get"] != "Read a page" {
		t.Fatalf("published after the first listing: %v", got)
	}
	// A later listing replaces the copy; a reseed keeps it.
	if err := grants.SyncListedTools(ctx, db, notion, list[:1]); err != nil {
		t.Fatal(err)
	}
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	if got := published("notion"); len(got) != 1 || got["search"] == "" {
		t.Fatalf("published after the second listing and a reseed: %v", got)
	}
	// The admin takes the copy over: listings leave it alone.
	if _, err := grants.UpdateServer(ctx, db, nil, "notion", grants.ServerInput{Tools: &[]grants.CatalogTool{{Name: "curated", Description: "ours"}}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := grants.SyncListedTools(ctx, db, notion, list); err != nil {
		t.Fatal(err)
	}
	if got := published("notion"); len(got) != 1 || got["curated"] != "ours" {
		t.Fatalf("an admin copy was replaced by a listing: %v", got)
	}
	// A server that seeds its own list (Cigale) keeps the seeded copy.
	cigale := login("cigale")
	before := len(published("cigale"))
	if err := grants.SyncListedTools(ctx, db, cigale, list); err != nil {
		t.Fatal(err)
	}
	if got := published("cigale"); len(got) != before || before == 0 {
		t.Fatalf("cigale's seeded copy changed: %d → %d", before, len(got))
	}
}
