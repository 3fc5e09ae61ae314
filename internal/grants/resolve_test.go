package grants

import (
	"math/rand"
	"testing"
)

// reference resolves one item the slow, obvious way: the deepest scope with a
// row decides enabled; the deepest row naming a login decides the login.
func reference(rows []Row, kind, key string) (set, enabled bool, conn string) {
	best, bestConn := -1, -1
	for _, r := range rows {
		k := r.CatalogID
		if kind == KindMCP {
			k = r.ServerID
		}
		if r.Kind != kind || k != key {
			continue
		}
		if o := chainOrder[r.Scope]; o > best {
			best, enabled = o, r.Enabled
		}
		if o := chainOrder[r.Scope]; r.ConnectionID != "" && o > bestConn {
			bestConn, conn = o, r.ConnectionID
		}
	}
	return best >= 0, enabled, conn
}

func TestResolveMatchesReferenceOnRandomChains(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(20240401))
	scopes := []Scope{ScopePlatform, ScopeOrganisation, ScopeGuild, ScopeAgent}
	servers := []string{"s1", "s2", "s3"}
	tools := []string{"s1_a", "s1_b", "s2_a"}
	toolServer := map[string]string{"s1_a": "s1", "s1_b": "s1", "s2_a": "s2"}
	for iter := 0; iter < 20000; iter++ {
		var rows []Row
		for _, sc := range scopes {
			for _, s := range servers {
				if rng.Intn(2) == 0 {
					r := Row{Scope: sc, Kind: KindMCP, CatalogID: s, ServerID: s, Enabled: rng.Intn(2) == 0}
					if rng.Intn(2) == 0 {
						r.ConnectionID = s + "-" + string(sc)
					}
					rows = append(rows, r)
				}
			}
			for _, tl := range tools {
				if rng.Intn(3) == 0 {
					rows = append(rows, Row{Scope: sc, Kind: KindMCPTool, CatalogID: tl, ServerID: toolServer[tl], Enabled: rng.Intn(2) == 0})
				}
			}
			if rng.Intn(2) == 0 {
				rows = append(rows, Row{Scope: sc, Kind: KindNativeTool, CatalogID: "note_get", Enabled: rng.Intn(2) == 0})
			}
		}
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		res := Resolve(rows)
		for _, s := range servers {
			set, en, conn := reference(rows, KindMCP, s)
			d := res.Servers[s]
			if d.Set != set || d.Enabled != en || d.ConnectionID != conn {
				t.Fatalf("iter %d server %s: got %+v, want set=%v enabled=%v conn=%q; rows %+v", iter, s, d, set, en, conn, rows)
			}
		}
		for _, tl := range tools {
			sSet, sOn, _ := reference(rows, KindMCP, toolServer[tl])
			tSet, tOn, _ := reference(rows, KindMCPTool, tl)
			want := sSet && sOn && (!tSet || tOn)
			if got, _ := res.ToolState(toolServer[tl], tl); got != want {
				t.Fatalf("iter %d tool %s: got %v want %v; rows %+v", iter, tl, got, want, rows)
			}
		}
		set, en, _ := reference(rows, KindNativeTool, "note_get")
		if d := res.Native["note_get"]; d.Enabled != (set && en) {
			t.Fatalf("iter %d note_get: got %+v", iter, d)
		}
	}
}

func TestEmptyChainIsDisabledButArtifactDefaultsHold(t *testing.T) {
	t.Parallel()
	res := Resolve(nil)
	if res.Native["note_get"].Enabled || res.Servers["x"].Enabled {
		t.Fatal("the empty chain must be disabled")
	}
	want := ArtifactReach{ReadGuild: true, ReadOrg: true, WriteGuild: true, WriteOrg: false}
	if got := res.Reach(); got != want {
		t.Fatalf("defaults %+v", got)
	}
	res = Resolve([]Row{{Scope: ScopeGuild, Kind: KindArtifactGrant, CatalogID: "write_org", Enabled: true},
		{Scope: ScopeAgent, Kind: KindArtifactGrant, CatalogID: "read_org", Enabled: false}})
	if got := res.Reach(); got != (ArtifactReach{ReadGuild: true, WriteGuild: true, WriteOrg: true}) {
		t.Fatalf("overlaid %+v", got)
	}
}

func TestToolOnNeverPunchesThroughServerOff(t *testing.T) {
	t.Parallel()
	res := Resolve([]Row{
		{Scope: ScopePlatform, Kind: KindMCP, ServerID: "s", CatalogID: "s", Enabled: true, ConnectionID: "c"},
		{Scope: ScopeGuild, Kind: KindMCP, ServerID: "s", CatalogID: "s", Enabled: false},
		{Scope: ScopeAgent, Kind: KindMCPTool, ServerID: "s", CatalogID: "s_t", Enabled: true},
	})
	if on, by := res.ToolState("s", "s_t"); on || by != ScopeGuild {
		t.Fatalf("tool on through server off: %v %s", on, by)
	}
	if res.Servers["s"].ConnectionID != "c" {
		t.Fatal("a row without a login must keep the inherited login")
	}
}

func TestModelNameAndDefaultOff(t *testing.T) {
	t.Parallel()
	if got := ModelName("notion", "notion.search pages"); got != "notion_notion_search_pages" {
		t.Fatal(got)
	}
	for _, c := range []struct {
		slug, name string
		off        bool
	}{{"gmail", "send_message", true}, {"gmail", "SendDraft", true}, {"gmail", "get_thread", false},
		{"drive", "create_file", true}, {"drive", "search", false}, {"wallet", "uniswap_swap", true},
		{"wallet", "get_balance", false}, {"opensea", "cancel_orders", true}, {"opensea", "search", false},
		{"x", "send", false}} {
		if DefaultOff(c.slug, c.name) != c.off {
			t.Errorf("%s %s: want off=%v", c.slug, c.name, c.off)
		}
	}
}
