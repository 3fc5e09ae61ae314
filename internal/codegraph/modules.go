package codegraph

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// importName is the name a Go import is used by when the file gives it
// none and the graph does not hold the package: the last element of the
// path that is not a major version (pgx for github.com/jackc/pgx/v5),
// without a go- prefix and cut at the first character a name cannot hold
// (yaml for gopkg.in/yaml.v3).
func importName(p string) string {
	i := strings.LastIndexByte(p, '/')
	last := p[i+1:]
	if i >= 0 && isMajor(last) {
		rest := p[:i]
		last = rest[strings.LastIndexByte(rest, '/')+1:]
	}
	last = strings.TrimPrefix(last, "go-")
	if i := strings.IndexAny(last, ".-"); i > 0 {
		last = last[:i]
	}
	return last
}

// isMajor reports a major-version path element: v2, v3, ...
func isMajor(e string) bool {
	if len(e) < 2 || e[0] != 'v' || e[1] == '0' {
		return false
	}
	for i := 1; i < len(e); i++ {
		if !isDigit(e[i]) {
			return false
		}
	}
	return true
}

// module is one Go module of the repository: its path (go.mod's module
// line) and the folder holding its go.mod.
type module struct{ path, dir string }

// readModules reads the module line of every go.mod of the repository,
// the longest module path first so a nested module wins.
func readModules(root string, files []*File) []module {
	var out []module
	for _, f := range files {
		if path.Base(f.Path) != "go.mod" {
			continue
		}
		if p := modulePath(filepath.Join(root, filepath.FromSlash(f.Path))); p != "" {
			out = append(out, module{path: p, dir: path.Dir(f.Path)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i].path) > len(out[j].path) })
	return out
}

func modulePath(file string) string {
	fh, err := os.Open(file) //nolint:gosec // G304: a go.mod the graph lists, a regular file of the repository
	if err != nil {
		return ""
	}
	defer func() { _ = fh.Close() }() // read only
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			rest = strings.TrimSpace(rest)
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			return strings.Trim(rest, `"`+"`")
		}
	}
	return ""
}

// importDir is the folder of the repository an import path names, when
// one of its modules holds it.
func (g *Graph) importDir(importPath string) (string, bool) {
	for _, m := range g.modules {
		if importPath == m.path {
			return m.dir, true
		}
		if len(importPath) > len(m.path) && importPath[len(m.path)] == '/' && strings.HasPrefix(importPath, m.path) {
			return path.Join(m.dir, importPath[len(m.path)+1:]), true
		}
	}
	return "", false
}

// pkgMatch scores how surely folder dir is the package of an import path:
// 10 when a module of the repository maps the path to it, else by the
// trailing elements they share (at most 4), 0 when they differ.
func (g *Graph) pkgMatch(importPath, dir string) int {
	if d, ok := g.importDir(importPath); ok {
		if d == dir {
			return 10
		}
		return 0
	}
	if n := sharedTail(importPath, dir); n > 0 {
		return 6 + min(n, 4)
	}
	return 0
}

// linkImports names each import of a Go file by the package clause of the
// folder it names, when the graph holds it and the file gave no name.
func (g *Graph) linkImports() {
	pkgs := map[string]string{}
	for _, f := range g.Files {
		if f.Lang == "go" && f.Pkg != "" && !strings.HasSuffix(f.Path, "_test.go") {
			pkgs[f.dir] = f.Pkg
		}
	}
	for _, f := range g.Files {
		if f.Lang != "go" {
			continue
		}
		for i := range f.Imports {
			im := &f.Imports[i]
			im.clause = ""
			if im.Alias != importName(im.Path) {
				continue // named in the file
			}
			if d, ok := g.importDir(im.Path); ok && pkgs[d] != "" && pkgs[d] != im.Alias {
				im.clause = pkgs[d]
			}
		}
	}
}
