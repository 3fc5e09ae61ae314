package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
)

// module is the module path; every rule below speaks of paths inside it.
const module = "github.com/guilds/guilds"

// pkg is one package of the module as `go list -deps -json` describes it.
type pkg struct {
	ImportPath string
	Imports    []string // direct imports of its non-test files
	Deps       []string // the whole closure of its non-test files
	Module     *struct{ Path string }
}

// rel is a package's path inside the module ("internal/grants").
func (p pkg) rel() string { return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/") }

// inModule lists the package's direct imports that are packages of the
// module, by their path inside it.
func (p pkg) inModule() []string {
	var out []string
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, module+"/") {
			out = append(out, strings.TrimPrefix(imp, module+"/"))
		}
	}
	return out
}

var (
	graphOnce sync.Once
	graph     map[string]pkg
	graphErr  error
)

// loadGraph lists every package of the module with `go list -deps -json ./...`,
// keeping the module's own packages; the tests share one listing.
func loadGraph(t *testing.T) map[string]pkg {
	t.Helper()
	graphOnce.Do(func() { graph, graphErr = listGraph() })
	if graphErr != nil {
		t.Fatal(graphErr)
	}
	return graph
}

func listGraph() (map[string]pkg, error) {
	// The go command that runs the tests puts its own root first on PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the layer rules read the import graph with go list: %w", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-json", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %w\n%s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	graph := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Module != nil && p.Module.Path == module {
			graph[p.rel()] = p
		}
	}
	if len(graph) == 0 {
		return nil, errors.New("go list found no package of the module")
	}
	return graph, nil
}

// sortedNames returns the graph's package paths in order.
func sortedNames(graph map[string]pkg) []string {
	names := make([]string, 0, len(graph))
	for n := range graph {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
