package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// A server that lists 5,000 tools (ten pages) is turned on, listed and
// stored in one go, shown whole in the Tools view and offered whole to a
// run. How long On and the first offer took is logged for
// docs/benchmarks.md, never asserted.
func TestServerWithFiveThousandToolsIsListedStoredAndOffered(t *testing.T) {
	const n = 5000
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) { d.URLPolicy = mcpoauth.Policy{AllowLoopback: true} })
	s := server.NewMCPServer("many", "1.0.0", server.WithToolCapabilities(false), server.WithPaginationLimit(500))
	for i := range n {
		s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithDescription("one of many"),
			mcp.WithString("q", mcp.Required()), mcp.WithNumber("limit")), okHandler)
	}
	url := newHTTPServer(t, server.NewStreamableHTTPServer(s))
	org, _, agent := me.Hierarchy()
	op := me.Operator(org)
	if r := me.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "many", "name": "Many", "transport": "http",
		"auth": "none", "url": url, "published": true,
		// The row's longest listing bound: a failure bound on a loaded machine.
		"config": map[string]any{"list_timeout_seconds": 120}}); r.Status != 201 {
		t.Fatalf("add the server: %d %s", r.Status, r.Body)
	}
	start := time.Now()
	if r := me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
		"catalog_kind": "mcp", "catalog_id": "many", "enabled": true}); r.Status != 200 {
		t.Fatalf("turn on: %d %s", r.Status, r.Body)
	}
	listed := time.Since(start)
	if got := me.Count("mcp_tools"); got != n {
		t.Fatalf("%d tools stored of %d", got, n)
	}
	start = time.Now()
	names, warnings := offeredNames(t, me, op, agent)
	offered := time.Since(start)
	many := 0
	for _, name := range names {
		if len(name) > 5 && name[:5] == "many_" {
			many++
		}
	}
	if many != n {
		t.Fatalf("%d tools offered of %d (warnings %.300s)", many, n, warnings)
	}
	if _, tools := toolsOf(t, me.Do(op, "GET", "/api/orgs/"+org+"/tools", nil), "many"); len(tools) != n {
		t.Fatalf("the Tools view shows %d tools of %d", len(tools), n)
	}
	t.Logf("5,000 tools: On to first listing stored %v; first offer %v", listed.Round(time.Millisecond), offered.Round(time.Millisecond))
}
