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
		{"symbols_limit", func() Result { return call(t, Symbols, env, SymbolsArgs{Pattern: "items", Limit: 2}) }},
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

// Call edges per language, resolved through declared types, imports,
// containers and folders.
func TestCallEdges(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	cases := []struct {
		symbol, direction string
		want, not         []string
	}{
		{"Store.Get", "in", []string{"← Server.Handle  gosrc/server.go:18", "← lookup  gosrc/main.go:16  (through Getter.Get)"}, nil},
		{"Server.Handle", "out", []string{"→ Store.Get  gosrc/store/store.go:26", "→ Logger.Printf  gosrc/server.go:7"}, []string{"Getter.Get"}},
		{"store.New", "in", []string{"← main  gosrc/main.go:10"}, nil},
		{"Getter.Get", "in", []string{"← lookup  gosrc/main.go:16", "← Server.Handle  gosrc/server.go:18  (calls Store.Get, an implementation)"}, nil},
		{"Store.Put", "in", []string{"← main  gosrc/main.go:11"}, []string{"guess"}},
		{"total_area", "in", []string{"← run  py/main.py:5"}, nil},
		{"Shape.area", "in", []string{"← Shape.describe  py/shapes.py:11"}, nil},
		{"Api.handle", "in", []string{"← Banner  web/view.tsx:5"}, []string{"Handler.handle"}},
		{"Router.add", "in", []string{"← Api.handle  web/api.ts:18"}, nil},
		{"slugify", "in", []string{"← joinSlugs  web/util.js:5", "← Router.add  web/util.js:13", "← Api.handle  web/api.ts:18"}, nil},
		{"make", "out", []string{"→ Queue.new  rs/lib.rs:14", "→ Queue.push  rs/lib.rs:18"}, nil},
		{"Greeter.greet", "in", []string{"← Greeter.main  java/com/acme/Greeter.java:22"}, nil},
		{"Greeter.greet", "out", []string{"→ Greeter.HELLO", "→ Greeter.name  java/com/acme/Greeter.java:11"}, nil},
	}
	for _, c := range cases {
		t.Run(c.symbol+" "+c.direction, func(t *testing.T) {
			r := call(t, Callers, env, CallersArgs{Symbol: c.symbol, Direction: c.direction})
			for _, w := range c.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("missing %q in\n%s", w, r.Text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.Text, n) {
					t.Errorf("unexpected %q in\n%s", n, r.Text)
				}
			}
		})
	}
}

func TestResultType(t *testing.T) {
	for _, c := range []struct{ lang, sig, want string }{
		{"go", "func New() *Store", "*Store"},
		{"go", "func (s *Store) Get(key string) (string, error)", "string"},
		{"go", "func Open(ctx context.Context, root, dir string) (g *Graph, err error)", "*Graph"},
		{"go", "func (s *Store) Put(key, value string)", ""},
		{"go", "func Make[T any](n int) List[T]", "List[T]"},
		{"python", "def load(path: str) -> Config", "Config"},
		{"rust", "pub fn new() -> Self", "Self"},
		{"typescript", "async function fetchUser(id: string): Promise<User>", "User>"},
		{"javascript", "function f(a)", ""},
	} {
		if got := resultType(c.lang, c.sig); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.lang, c.sig, got, c.want)
		}
	}
}

func TestWordIn(t *testing.T) {
	for _, c := range []struct {
		s, t string
		want bool
	}{
		{"HistoryTask", "task", true},
		{"HistoryTask", "history", true},
		{"HistoryTasks", "task", false},
		{"execute_history_task", "history", true},
		{"HTTPServer", "server", true},
		{"HTTPServer", "http", true},
		{"taskQueue", "task", true},
		{"multitask", "task", false},
		{"Task2", "task", true},
	} {
		if got := wordIn(c.s, c.t, indexFold(c.s, c.t, 0)); got != c.want {
			t.Errorf("wordIn(%q, %q) = %v", c.s, c.t, got)
		}
	}
}
