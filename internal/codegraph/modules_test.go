package codegraph

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module's root package called from its other packages, through an
// import path ending in a major version, and a package whose folder name
// is not its package clause.
func TestModuleRootAndVersionedImports(t *testing.T) {
	env, _ := newHome(t, "repos/mods", "mods")
	for _, c := range []struct{ symbol, want string }{
		{"Connect", "← Open  sub/sub.go:11"},
		{"mods.Connect", "← Open  sub/sub.go:11"},
		{"Make", "← Open  sub/sub.go:10"},
	} {
		r := call(t, Callers, env, CallersArgs{Symbol: c.symbol})
		if !strings.Contains(r.Text, c.want) || strings.Contains(r.Text, "guess") {
			t.Errorf("%s: want %q, unflagged, in\n%s", c.symbol, c.want, r.Text)
		}
	}
}

func TestDefaultImportName(t *testing.T) {
	for path, want := range map[string]string{
		"github.com/jackc/pgx/v5":  "pgx",
		"gopkg.in/yaml.v3":         "yaml",
		"example.com/m/store":      "store",
		"fmt":                      "fmt",
		"github.com/x/go-redis/v9": "redis",
	} {
		if got := importName(path); got != want {
			t.Errorf("importName(%q) = %q, want %q", path, got, want)
		}
	}
}

// More callers than one answer lists: the answer says how many it left
// out and where, and the next page lists them.
func TestCallersCapSaysWhatItLeftOut(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "repos", "many")
	write := func(rel, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/many\n")
	write("target.go", "package many\n\nfunc Target() {}\n")
	for i := range 30 {
		dir := "a"
		if i >= 20 {
			dir = "b"
		}
		write(fmt.Sprintf("%s/c%02d.go", dir, i), fmt.Sprintf("package %s\n\nimport \"example.com/many\"\n\nfunc C%02d() { many.Target() }\n", dir, i))
	}
	env := &Env{Home: home, Cwd: root}
	r := call(t, Callers, env, CallersArgs{Symbol: "Target"})
	if !strings.Contains(r.Text, "… 5 more of 30 not listed (page 2 lists them; in b (5))") || r.Meta["not_listed"] != 5 {
		t.Fatalf("page 1:\n%s\n%v", r.Text, r.Meta)
	}
	r = call(t, Callers, env, CallersArgs{Symbol: "Target", Page: 2})
	if !strings.Contains(r.Text, "(page 2: 25 edges of 30 before these)") || !strings.Contains(r.Text, "← C29  b/c29.go:5") ||
		strings.Contains(r.Text, "C24 ") || r.Meta["hits"] != 5 {
		t.Fatalf("page 2:\n%s\n%v", r.Text, r.Meta)
	}
	if r := call(t, Callers, env, CallersArgs{Symbol: "Target", Page: -1}); !strings.Contains(r.Text, "page: must be 1 or more") {
		t.Fatalf("bad page: %s", r.Text)
	}
}

// code_find puts the definition a qualified name names first, then the
// same-named definitions nearest the asking folder.
func TestFindRanksNamedDefinitionsFirst(t *testing.T) {
	first := func(env *Env, q string) string {
		t.Helper()
		r := call(t, Find, env, FindArgs{Question: q})
		line, _, _ := strings.Cut(r.Text, "\n")
		return line
	}
	env, _ := newHome(t, "repos/mods", "mods")
	for q, want := range map[string]string{
		"Conn.Close":          "method Conn.Close  mods.go",
		"Pool.Close":          "method Pool.Close  near/near.go",
		"where is Conn.Close": "method Conn.Close  mods.go",
		"near.Close":          "func Close  near/near.go",
		"Connect":             "func Connect  mods.go",
	} {
		if got := first(env, q); !strings.Contains(got, want) {
			t.Errorf("%q: first %q, want %q", q, got, want)
		}
	}
	// Asked from near/ about the whole repository, a bare Close finds
	// near's first (fewer references than Conn.Close), from the root
	// the most referenced.
	env.Cwd = filepath.Join(env.Home, "repos", "mods", "near")
	r := call(t, Find, env, FindArgs{Question: "Close", In: ".."})
	lines := strings.Split(r.Text, "\n")
	if len(lines) < 5 || !strings.Contains(lines[0], "  near.go") || !strings.Contains(lines[2], "  near.go") ||
		!strings.Contains(lines[4], "method Conn.Close  ") {
		t.Errorf("Close from near/:\n%s", r.Text)
	}
	env.Cwd = filepath.Join(env.Home, "repos", "mods")
	if got := first(env, "Close"); !strings.Contains(got, "method Conn.Close  mods.go") {
		t.Errorf("Close from the root: first %q", got)
	}
}

// x := v.M() takes the result type of method M of v's type.
func TestTypeFromAMethodsResult(t *testing.T) {
	env, _ := newHome(t, "repos/mods", "mods")
	r := call(t, Callers, env, CallersArgs{Symbol: "Rows.Next"})
	if !strings.Contains(r.Text, "← Use  sub/sub.go:17") || !strings.Contains(r.Text, "← Holder.Rows  mods.go:42") ||
		strings.Contains(r.Text, "guess") {
		t.Errorf("Rows.Next:\n%s", r.Text)
	}
	r = call(t, Callers, env, CallersArgs{Symbol: "Pool.Next"})
	if strings.Contains(r.Text, "sub.go") {
		t.Errorf("Pool.Next:\n%s", r.Text)
	}
}

// A call on a value whose type comes from outside the repository is not
// guessed onto a same-named method of the repository.
func TestOutsideReceiversAreNotGuessed(t *testing.T) {
	env, _ := newHome(t, "repos/mods", "mods")
	for _, sym := range []string{"Conn.String", "Conn.Flush"} {
		r := call(t, Callers, env, CallersArgs{Symbol: sym})
		if strings.Contains(r.Text, "rec.go") {
			t.Errorf("%s:\n%s", sym, r.Text)
		}
	}
}

// x := y takes y's declared type, y a package variable of another file.
func TestTypeOfAnotherVariable(t *testing.T) {
	env, _ := newHome(t, "repos/mods", "mods")
	r := call(t, Callers, env, CallersArgs{Symbol: "Conn.Flush"})
	if !strings.Contains(r.Text, "← flushDefault  use.go:6") || strings.Contains(r.Text, "guess") {
		t.Errorf("Conn.Flush:\n%s", r.Text)
	}
	if r := call(t, Callers, env, CallersArgs{Symbol: "Pool.Flush"}); strings.Contains(r.Text, "use.go") {
		t.Errorf("Pool.Flush:\n%s", r.Text)
	}
}
