package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// A tool whose input schema is not a JSON Schema a run can offer (a type
// that does not exist, "properties" that is a number, a root that is not an
// object) is still listed and stored with the server's other tools; the
// Tools view shows it with the problem, and no run is ever offered it: the
// offer's warnings say why.
func TestToolWithABrokenSchemaIsListedButNeverOffered(t *testing.T) {
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) { d.URLPolicy = mcpoauth.Policy{AllowLoopback: true} })
	s := server.NewMCPServer("schemas", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("good", mcp.WithString("q")), okHandler)
	broken := map[string]string{"typo": `{"type":"strnig"}`, "numprops": `{"type":"object","properties":5}`, "text": `{"type":"string"}`}
	for name, schema := range broken {
		s.AddTool(mcp.NewToolWithRawSchema(name, "", json.RawMessage(schema)), okHandler)
	}
	url := newHTTPServer(t, server.NewStreamableHTTPServer(s))
	org, _, agent := me.Hierarchy()
	op := me.Operator(org)
	if r := me.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "schemas", "name": "Schemas", "transport": "http",
		"auth": "none", "url": url, "published": true}); r.Status != 201 {
		t.Fatalf("add the server: %d %s", r.Status, r.Body)
	}
	if r := me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
		"catalog_kind": "mcp", "catalog_id": "schemas", "enabled": true}); r.Status != 200 {
		t.Fatalf("turn on: %d %s", r.Status, r.Body)
	}

	var v struct {
		Servers []struct {
			Slug  string
			Tools []struct {
				RemoteName string `json:"remote_name"`
				Listed     bool
				Problem    string
			}
		}
	}
	r := me.Do(op, "GET", "/api/orgs/"+org+"/tools", nil)
	if r.Status != 200 {
		t.Fatalf("tools view: %d %s", r.Status, r.Body)
	}
	r.JSON(&v)
	problems := map[string]string{}
	for _, srv := range v.Servers {
		if srv.Slug != "schemas" {
			continue
		}
		for _, tl := range srv.Tools {
			if !tl.Listed {
				t.Fatalf("%s shown from the catalog, not listed", tl.RemoteName)
			}
			problems[tl.RemoteName] = tl.Problem
		}
	}
	if len(problems) != 4 || problems["good"] != "" {
		t.Fatalf("tools view: %v", problems)
	}
	for name := range broken {
		if !strings.HasPrefix(problems[name], "never offered to a model: its input schema cannot be offered") {
			t.Fatalf("tools view shows %s with problem %q", name, problems[name])
		}
	}

	names, warnings := offeredNames(t, me, op, agent)
	if !has(names, "schemas_good") {
		t.Fatalf("the good tool is not offered: %v (%s)", names, warnings)
	}
	for name := range broken {
		if has(names, "schemas_"+name) {
			t.Fatalf("%s offered with a broken schema", name)
		}
		if !strings.Contains(warnings, `tool "schemas_`+name+`" of Schemas left out: never offered to a model`) {
			t.Fatalf("no warning for %s: %s", name, warnings)
		}
	}
}
