package webapp

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// importFrom finds a module's static imports: `import … from "x"` and `import "x"`.
var importFrom = regexp.MustCompile(`(?m)^\s*import\s+(?:[^;"]*?\sfrom\s+)?"([^"]+)"`)

// The app's modules import each other without a cycle: pages import the
// shared state (state.js), never the router (app.js) that imports them.
func TestModulesImportNoCycle(t *testing.T) {
	graph := map[string][]string{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		graph[p] = nil
		for _, m := range importFrom.FindAllStringSubmatch(string(body), -1) {
			if strings.HasPrefix(m[1], ".") {
				graph[p] = append(graph[p], path.Join(path.Dir(p), m[1]))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(graph["assets/app.js"]) == 0 {
		t.Fatal("found no import in app.js: the import pattern is stale")
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string)
	visit = func(m string) {
		switch state[m] {
		case open:
			i := len(stack) - 1
			for stack[i] != m {
				i--
			}
			t.Errorf("import cycle: %s -> %s", strings.Join(stack[i:], " -> "), m)
			return
		case done:
			return
		}
		state[m] = open
		stack = append(stack, m)
		for _, dep := range graph[m] {
			if _, ok := graph[dep]; !ok {
				t.Errorf("%s imports %s, which is not in assets", m, dep)
				continue
			}
			visit(dep)
		}
		stack = stack[:len(stack)-1]
		state[m] = done
	}
	for m := range graph {
		visit(m)
	}
}
