package codegraph

import (
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
