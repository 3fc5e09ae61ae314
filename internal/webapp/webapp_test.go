package webapp

import (
	"regexp"
	"strings"
	"testing"
)

// TestPagesCallOnlyGeneratedOperations: every api.<operation>( a page calls
// is exported by the generated client, so a route removed or renamed in the
// table (then go generate) breaks this test instead of the operator's page.
func TestPagesCallOnlyGeneratedOperations(t *testing.T) {
	gen, ok := Lookup("/api.gen.js")
	if !ok {
		t.Fatal("no api.gen.js: run go generate ./internal/webapp")
	}
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`export const ([a-z0-9_]+) =`).FindAllStringSubmatch(string(gen.Body), -1) {
		exported[m[1]] = true
	}
	calls := regexp.MustCompile(`\bapi\.([a-z0-9_]+)\(`)
	n := 0
	for _, p := range Paths() {
		if !strings.HasSuffix(p, ".js") || p == "/api.gen.js" {
			continue
		}
		a, _ := Lookup(p)
		for _, m := range calls.FindAllStringSubmatch(string(a.Body), -1) {
			n++
			if !exported[m[1]] {
				t.Errorf("%s calls api.%s, which the route table does not have", p, m[1])
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d calls: the pattern no longer matches the pages", n)
	}
}

func TestEveryFileHasATypeAndTheIndexExists(t *testing.T) {
	if len(Index().Body) == 0 {
		t.Fatal("no index.html")
	}
	for _, p := range Paths() {
		a, _ := Lookup(p)
		if a.Type == "application/octet-stream" || a.ETag == "" {
			t.Errorf("%s: type %q etag %q", p, a.Type, a.ETag)
		}
	}
}
