package grants_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/orgs"
)

func allNativeOn() grants.Resolved {
	var rows []grants.Row
	for _, n := range grants.NativeCatalog(grantstest.Registry()) {
		if n.IsBinding() {
			rows = append(rows, grants.Row{Scope: grants.ScopePlatform, Kind: grants.KindNativeTool, CatalogID: n.Name, Enabled: true})
		}
	}
	return grants.Resolve(rows)
}

func names(o grants.Offer) map[string]bool {
	m := map[string]bool{}
	for _, t := range o.Tools {
		m[t.Name] = true
	}
	return m
}

// TestRunOfferRules checks every gating rule over flags × triggers × integrations.
func TestRunOfferRules(t *testing.T) {
	t.Parallel()
	reg := grantstest.Registry()
	webOn := integrations.New(func(k string) string {
		if k == "TAVILY_API_KEY" {
			return "tvly-x"
		}
		return ""
	})
	webOff := integrations.New(func(string) string { return "" })
	res := allNativeOn()
	for mask := 0; mask < 16; mask++ {
		cfg := orgs.AgentConfig{Browser: mask&1 != 0, Coding: mask&2 != 0, Scripting: mask&4 != 0, Memory: mask&8 != 0}
		for _, trig := range []grants.Trigger{grants.TriggerDirect, grants.TriggerGroup, grants.TriggerSchedule} {
			for _, integ := range []*integrations.Registry{webOn, webOff} {
				o, err := grants.BuildOffer(grants.OfferInputs{Resolved: res, Config: cfg, Trigger: trig, Integrations: integ, Registry: reg})
				if err != nil {
					t.Fatal(err)
				}
				got := names(o)
				for _, n := range grants.NativeCatalog(grantstest.Registry()) {
					want := true
					switch {
					case n.Family == "browser":
						want = cfg.Browser
					case n.Family == "code":
						want = cfg.Coding
					case n.Family == "scripts":
						want = cfg.Scripting
					case n.Name == "memory_write":
						want = cfg.Memory
					case n.Family == "schedules":
						want = trig != grants.TriggerSchedule
					case n.Name == "secret_request":
						want = trig == grants.TriggerDirect
					case n.Name == "tavily_search":
						want = integ == webOn
					}
					if got[n.Name] != want {
						t.Errorf("cfg %+v trigger %s web %v: %s offered=%v want %v", cfg, trig, integ == webOn, n.Name, got[n.Name], want)
					}
				}
				if o.Memory != cfg.Memory {
					t.Errorf("Memory flag %v with cfg %+v", o.Memory, cfg)
				}
			}
		}
	}
}

func TestOfferLeavesOutOffAndMissingImplementations(t *testing.T) {
	t.Parallel()
	reg := grantstest.Registry("note_get")
	res := grants.Resolve([]grants.Row{
		{Scope: grants.ScopePlatform, Kind: grants.KindNativeTool, CatalogID: "note_find", Enabled: true},
		{Scope: grants.ScopePlatform, Kind: grants.KindNativeTool, CatalogID: "note_get", Enabled: true},
		{Scope: grants.ScopeAgent, Kind: grants.KindNativeTool, CatalogID: "note_find", Enabled: false},
	})
	o, err := grants.BuildOffer(grants.OfferInputs{Resolved: res, Trigger: grants.TriggerDirect, Registry: reg,
		Config: orgs.AgentConfig{Memory: true}})
	if err != nil {
		t.Fatal(err)
	}
	got := names(o)
	if got["note_find"] || got["note_get"] || !got["report_issue"] || len(got) != 1 {
		t.Fatalf("offered %v", got)
	}
	if o.Tools[0].ShapedSchema == nil || strings.Contains(string(o.Tools[0].ShapedSchema), "additionalProperties") {
		t.Fatalf("shaped %s", o.Tools[0].ShapedSchema)
	}
}

func TestOfferMCPStatuses(t *testing.T) {
	t.Parallel()
	reg := grantstest.Registry()
	res := grants.Resolve([]grants.Row{
		{Scope: grants.ScopeGuild, Kind: grants.KindMCP, ServerID: "s1", CatalogID: "s1", Enabled: true, ConnectionID: "c1"},
		{Scope: grants.ScopeOrganisation, Kind: grants.KindMCPTool, ServerID: "s1", CatalogID: "x_post", Enabled: false},
	})
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	login := grants.ServerLogin{ServerID: "s1", Slug: "x", Name: "X", Kind: "adapter", ConnectionID: "c1", ConnectionStatus: "connected",
		Tools: []grants.StoredTool{{RemoteName: "search", Name: "x_search", Schema: schema}, {RemoteName: "post", Name: "x_post", Schema: schema},
			{RemoteName: "bad", Name: "x_bad", Schema: json.RawMessage(`{"type":"string"}`)}}}
	in := grants.OfferInputs{Resolved: res, Servers: []grants.ServerLogin{login}, Trigger: grants.TriggerDirect, Registry: reg}
	o, err := grants.BuildOffer(in)
	if err != nil {
		t.Fatal(err)
	}
	got := names(o)
	if !got["x_search"] || got["x_post"] || got["x_bad"] || len(o.Warnings) != 1 {
		t.Fatalf("offered %v warnings %v", got, o.Warnings)
	}
	for _, tl := range o.Tools {
		if tl.Name == "x_search" && (tl.ConnectionID != "c1" || tl.RemoteName != "search" || tl.Class != "adapter" || tl.Kind != "mcp") {
			t.Fatalf("mcp tool %+v", tl)
		}
	}
	login.ConnectionStatus = "pending"
	in.Servers = []grants.ServerLogin{login}
	if o, _ := grants.BuildOffer(in); names(o)["x_search"] {
		t.Fatal("a pending login's tools were offered")
	}
	login.ConnectionStatus = "disconnected"
	in.Servers = []grants.ServerLogin{login}
	_, err = grants.BuildOffer(in)
	var disc *grants.ErrConnectionDisconnected
	if !errors.As(err, &disc) || disc.ServerSlug != "x" || !strings.Contains(err.Error(), "X") {
		t.Fatalf("disconnected: %v", err)
	}
}

// A listed tool whose model-facing name is a native tool's is left out, even
// when that native tool is off for the run.
func TestListedToolNeverPosesAsANativeTool(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	res := grants.Resolve([]grants.Row{
		{Scope: grants.ScopePlatform, Kind: grants.KindNativeTool, CatalogID: "note_find", Enabled: true},
		{Scope: grants.ScopeGuild, Kind: grants.KindMCP, ServerID: "s1", CatalogID: "s1", Enabled: true, ConnectionID: "c1"},
	})
	login := grants.ServerLogin{ServerID: "s1", Slug: "note", Name: "Note", Kind: "remote", ConnectionID: "c1", ConnectionStatus: "connected",
		Tools: []grants.StoredTool{{RemoteName: "find", Name: "note_find", Schema: obj}, {RemoteName: "get", Name: "note_get", Schema: obj},
			{RemoteName: "pin", Name: "note_pin", Schema: obj}}}
	o, err := grants.BuildOffer(grants.OfferInputs{Resolved: res, Servers: []grants.ServerLogin{login}, Trigger: grants.TriggerDirect,
		Registry: grantstest.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, tl := range o.Tools {
		if prev, dup := kinds[tl.Name]; dup {
			t.Fatalf("%s offered twice (%s and %s)", tl.Name, prev, tl.Kind)
		}
		kinds[tl.Name] = tl.Kind
	}
	if kinds["note_find"] != "native" || kinds["note_get"] != "" || kinds["note_pin"] != "mcp" || len(o.Warnings) != 2 || !strings.Contains(o.Warnings[0], "native tool has that name") {
		t.Fatalf("offered %v warnings %v", kinds, o.Warnings)
	}
}
