package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
)

// Notion publishes its tools as a connected session lists them: after an
// OAuth login's first listing, GET /api/mcp/servers shows them as notion's
// tools (names, descriptions, schemas). Once the instance admin edits the
// copy (copy_source=admin), a later listing leaves it alone.
func TestConnectedListingPublishesTheServersTools(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	ctx := context.Background()
	if err := grants.Seed(ctx, me.DB, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	oauthFixture(t, me) // points the seeded notion row at a fake
	published := func() grants.Server {
		t.Helper()
		var list []grants.Server
		r := me.Do(me.Operator(""), "GET", "/api/mcp/servers", nil)
		if r.Status != 200 {
			t.Fatalf("servers: %d %s", r.Status, r.Body)
		}
		r.JSON(&list)
		for _, s := range list {
			if s.Slug == "notion" {
				return s
			}
		}
		t.Fatal("notion is not published")
		return grants.Server{}
	}
	if s := published(); s.CopySource != "seed" || len(s.Tools) != 0 {
		t.Fatalf("seeded notion: copy %s, tools %v", s.CopySource, s.Tools)
	}

	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 || r.Map()["tools"] != float64(2) {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	s := published()
	tools := map[string]grants.CatalogTool{}
	for _, tl := range s.Tools {
		tools[tl.Name] = tl
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	_ = json.Unmarshal(tools["echo"].InputSchema, &schema)
	if len(s.Tools) != 2 || tools["echo"].Description != "Echo" || schema.Properties["text"] == nil ||
		len(schema.Required) != 1 || schema.Required[0] != "text" {
		t.Fatalf("notion's published copy after the listing: %+v", s.Tools)
	}
	if _, ok := tools["pages.search"]; !ok {
		t.Fatalf("the listed pages.search is not published: %+v", s.Tools)
	}

	// The admin takes the copy over; a later listing leaves it alone.
	r := me.Admin("PATCH", "/api/admin/mcp/servers/notion", map[string]any{"tools": []map[string]any{
		{"name": "search", "description": "Search the workspace (admin's copy)", "input_schema": map[string]any{"type": "object"}}}})
	if r.Status != 200 || r.Map()["copy_source"] != "admin" {
		t.Fatalf("admin edit: %d %s", r.Status, r.Body)
	}
	if listed, err := me.Pool.Sync(ctx, id); err != nil || len(listed) != 2 {
		t.Fatalf("later listing: %v %v", listed, err)
	}
	if s := published(); s.CopySource != "admin" || len(s.Tools) != 1 || s.Tools[0].Name != "search" ||
		s.Tools[0].Description != "Search the workspace (admin's copy)" {
		t.Fatalf("the admin's copy after a later listing: %s %+v", s.CopySource, s.Tools)
	}
}
