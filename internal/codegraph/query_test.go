package codegraph

import (
	"fmt"
	"strings"
	"testing"
)

// Outlines of every fixture file, and the answers of each query, as golden text.
func TestOutlineGolden(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	for _, rel := range []string{
		"gosrc/store/store.go", "gosrc/main.go", "py/shapes.py", "web/util.js",
		"web/api.ts", "web/view.tsx", "rs/lib.rs", "java/com/acme/Greeter.java",
	} {
		t.Run(rel, func(t *testing.T) {
			r := call(t, Outline, env, OutlineArgs{Path: rel})
			if r.Meta["repository"] != "poly" || r.Meta["hits"].(int) == 0 {
				t.Fatalf("meta %v", r.Meta)
			}
			golden(t, "outline/"+strings.ReplaceAll(rel, "/", "_")+".txt", r.Text)
		})
	}
}

func TestQueriesGolden(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	cases := []struct {
		name string
		q    func() Result
	}{
		{"map", func() Result { return call(t, Map, env, MapArgs{Repo: "poly"}) }},
		{"find_store_get", func() Result {
			return call(t, Find, env, FindArgs{Question: "get a value from the store", Source: true, Limit: 3})
		}},
		{"find_area", func() Result { return call(t, Find, env, FindArgs{Question: "total area of shapes"}) }},
		{"find_in_web", func() Result { return call(t, Find, env, FindArgs{Question: "handle request", In: "web"}) }},
		{"callers_store_get", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "Store.Get"}) }},
		{"callers_slugify_depth2", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "slugify", Depth: 2}) }},
		{"callers_main_out", func() Result {
			return call(t, Callers, env, CallersArgs{Symbol: "main", Direction: "out", Depth: 2, In: "gosrc"})
		}},
		{"callers_make_out", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "make", Direction: "out"}) }},
		{"callers_area", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "area"}) }},
		{"callers_greet", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "Greeter.greet"}) }},
		{"callers_missing", func() Result { return call(t, Callers, env, CallersArgs{Symbol: "slug"}) }},
		{"symbols_items", func() Result { return call(t, Symbols, env, SymbolsArgs{Pattern: "items"}) }},
		{"symbols_glob_ignore_case", func() Result {
			return call(t, Symbols, env, SymbolsArgs{Pattern: "ROUTER", IgnoreCase: true, Glob: "*.ts"})
		}},
		{"symbols_fixed_path", func() Result {
			return call(t, Symbols, env, SymbolsArgs{Pattern: "self.r", Fixed: true, Path: "py"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.q()
			golden(t, "query/"+c.name+".txt", fmt.Sprintf("%s\n-- meta: %v\n", r.Text, r.Meta))
		})
	}
}
