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

// moduleOf is the module of the repository holding an import path, and
// the path inside it ("" for its root package).
func (g *Graph) moduleOf(importPath string) (module, string, bool) {
	for _, m := range g.modules {
		if importPath == m.path {
			return m, "", true
		}
		if len(importPath) > len(m.path) && importPath[len(m.path)] == '/' && strings.HasPrefix(importPath, m.path) {
			return m, importPath[len(m.path)+1:], true
		}
	}
	return module{}, "", false
}

// joinedIs reports whether dir is path.Join(base, rest), without building it.
func joinedIs(dir, base, rest string) bool {
	switch {
	case base == ".":
		return dir == rest || rest == "" && dir == "."
	case rest == "":
		return dir == base
	}
	return len(dir) == len(base)+1+len(rest) && strings.HasPrefix(dir, base) && dir[len(base)] == '/' && strings.HasSuffix(dir, rest)
}

// pkgMatch scores how surely folder dir is the package of an import path:
// 10 when a module of the repository maps the path to it, else by the
// trailing elements they share (at most 4), 0 when they differ.
func (g *Graph) pkgMatch(importPath, dir string) int {
	if m, rest, ok := g.moduleOf(importPath); ok {
		if joinedIs(dir, m.dir, rest) {
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
	if len(g.modules) == 0 {
		return
	}
	pkgs := map[string]string{} // import path → package clause
	seen := map[string]bool{}
	for _, f := range g.Files {
		if f.Lang != "go" || f.Pkg == "" || strings.HasSuffix(f.Path, "_test.go") || seen[f.dir] {
			continue
		}
		seen[f.dir] = true
		if p, ok := g.importPathOf(f.dir); ok {
			pkgs[p] = f.Pkg
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
			if p := pkgs[im.Path]; p != "" && p != im.Alias {
				im.clause = p
			}
		}
	}
}

// importPathOf is the import path of a folder of the repository, from the
// module holding it (the nearest go.mod above it).
func (g *Graph) importPathOf(dir string) (string, bool) {
	best := -1
	for i, m := range g.modules {
		if (m.dir == "." || dir == m.dir || strings.HasPrefix(dir, m.dir+"/")) && (best < 0 || len(m.dir) > len(g.modules[best].dir) || g.modules[best].dir == ".") {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	m := g.modules[best]
	switch {
	case dir == m.dir:
		return m.path, true
	case m.dir == ".":
		return m.path + "/" + dir, true
	}
	return m.path + "/" + dir[len(m.dir)+1:], true
}
