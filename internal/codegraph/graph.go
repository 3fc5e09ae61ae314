package codegraph

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Graph is one repository's structural graph, refreshed against its
// working tree.
type Graph struct {
	Name  string // the folder's name under /home/agent/repos
	Root  string // its path on the helper's filesystem
	Files []*File
	Stats Stats

	byPath map[string]*File
	defs   map[string][]defID // name → definitions (impl blocks and constructors left out)
}

type defID struct{ file, def int32 }

// Open refreshes the graph of the repository at root, stored in dir,
// against the working tree, and saves it when anything changed.
func Open(ctx context.Context, root, dir string) (*Graph, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("graph folder: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("graph lock: %w", err)
	}
	defer unlock()
	store := filepath.Join(dir, storeName)
	old := loadStore(store)
	files, st, err := refresh(ctx, root, old)
	if err != nil {
		return nil, err
	}
	g := &Graph{Name: filepath.Base(root), Root: root, Files: files, Stats: st}
	g.index()
	if st.Built || st.Parsed > 0 || st.Removed > 0 || len(files) != len(old) {
		g.count()
		if err := saveStore(store, files); err != nil {
			return nil, err
		}
	} else if st.Unchanged != len(old) || changedStat(old, files) {
		if err := saveStore(store, files); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// changedStat reports a stat-only change (a touched file), worth saving so
// the next call does not hash it again.
func changedStat(old, files []*File) bool {
	for i := range files {
		if old[i] != files[i] {
			return true
		}
	}
	return false
}

func (g *Graph) index() {
	g.byPath = make(map[string]*File, len(g.Files))
	g.defs = map[string][]defID{}
	for fi, f := range g.Files {
		g.byPath[f.Path] = f
		f.dir = path.Dir(f.Path)
		f.dirBase = path.Base(f.dir)
		f.stem = strings.TrimSuffix(path.Base(f.Path), path.Ext(f.Path))
		f.fam = family(f.Lang)
		for di := range f.Defs {
			d := &f.Defs[di]
			if d.Kind == "impl" || d.Kind == "constructor" {
				continue
			}
			g.defs[d.Name] = append(g.defs[d.Name], defID{int32(fi), int32(di)})
		}
	}
}

func (g *Graph) def(id defID) (*File, *Def) {
	f := g.Files[id.file]
	return f, &f.Defs[id.def]
}

// count recomputes, for every definition, how many places reference it.
func (g *Graph) count() {
	for _, f := range g.Files {
		f.Counts = make([]int32, len(f.Defs))
	}
	var buf []defID
	for fi, f := range g.Files {
		for _, r := range f.refs() {
			buf = g.resolve(int32(fi), r, buf[:0])
			for _, id := range buf {
				g.Files[id.file].Counts[id.def]++
			}
		}
	}
}

// Count is how many places reference the definition.
func (f *File) Count(di int) int {
	if di < len(f.Counts) {
		return int(f.Counts[di])
	}
	return 0
}

func family(lang string) string {
	if l := languages[lang]; l != nil {
		return l.family
	}
	return ""
}

// resolve appends the definitions a reference most likely names: the
// candidates of its name scored by qualifier, container and distance, the
// best score kept. A qualified Go name resolves only through an import.
func (g *Graph) resolve(fi int32, r Ref, out []defID) []defID {
	f := g.Files[fi]
	name := f.Names[r.Name]
	cands := g.defs[name]
	if len(cands) == 0 {
		return out
	}
	qual := ""
	if r.Qual >= 0 {
		qual = f.Names[r.Qual]
	}
	fam := f.fam
	isGo := f.Lang == "go"
	strict := f.Lang == "java" || f.Lang == "rust"
	member := r.Flags&refMember != 0
	var importPath string
	if isGo && member {
		for _, im := range f.Imports {
			if im.Alias == qual {
				importPath = im.Path
				break
			}
		}
	}
	here := ""
	if r.Def >= 0 {
		here = f.container(r.Def)
	}
	dir := f.dir
	best := 0
	start := len(out)
	for _, id := range cands {
		cf, d := g.def(id)
		if cf.fam != fam {
			continue
		}
		s := 0
		sameFile := id.file == fi
		sameDir := cf.dir == dir
		method := d.Container != "" && !classLike(d.Kind)
		switch {
		case importPath != "":
			// pkg.Name: a top-level definition of the imported package.
			if n := sharedTail(importPath, cf.dir); !method && d.Parent < 0 && n > 0 {
				s = 6 + min(n, 4)
			}
		case method && strict && r.Flags&refCall == 0:
			// A Java or Rust method is only called; a bare name is a field.
		case method && member:
			s = 2
			if qual == d.Container || ((qual == "self" || qual == "this") && here == d.Container) {
				s = 5
			}
			if sameFile {
				s++
			}
		case method:
			if here != "" && here == d.Container {
				s = 5
			}
		case member:
			if qual == d.Container || qual == cf.stem || qual == cf.dirBase {
				s = 4
			}
			if isGo {
				s = 0 // a Go qualifier is an import (handled above) or a value
			}
		default:
			switch {
			case sameFile:
				s = 5
			case sameDir:
				s = 4
			case !isGo:
				s = 2
			}
		}
		if s == 0 || s < best {
			continue
		}
		if s > best {
			best = s
			out = out[:start]
		}
		out = append(out, id)
	}
	return out
}

// sharedTail counts the trailing path components an import path and a
// folder have in common (example.com/m/store and pkg/store share 1).
func sharedTail(importPath, dir string) int {
	n := 0
	for importPath != "" && dir != "" {
		i, j := strings.LastIndexByte(importPath, '/'), strings.LastIndexByte(dir, '/')
		if importPath[i+1:] != dir[j+1:] {
			break
		}
		n++
		if i < 0 || j < 0 {
			break
		}
		importPath, dir = importPath[:i], dir[:j]
	}
	return n
}
