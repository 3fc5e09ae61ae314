package codegraph

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Graph is one repository's structural graph, refreshed against its
// working tree.
type Graph struct {
	Name  string // the folder's name under /home/agent/repos
	Root  string // its path on the helper's filesystem
	Files []*File
	Stats Stats

	byPath   map[string]*File
	defs     map[string][]defID           // name → definitions (impl blocks and constructors left out)
	methods  map[string]map[string]string // "family container" → its methods' signature shapes (gotypes_satisfy.go), built on first use
	embeds   map[string][]embedded        // "family type" → its Go embedded fields (gotypes_embed.go), built on first use
	agreed   map[string]fieldType         // "family field" → the type all Go fields of that name share (gotypes_chain.go)
	nameOnce sync.Once
	typeOnce sync.Once         // builds methods and embeds
	fields   map[string]*Local // "family container field" → the field's declared type
	modules  []module          // the Go modules of the repository, the longest path first
	// fieldNames holds "family name" of every typed field of the repository.
	fieldNames map[string]bool
	dirFiles   map[string][]int32 // folder → its files, for package-level lookups
}

type defID struct{ file, def int32 }

// Open refreshes the graph of the repository at root, stored in dir,
// against the working tree, and saves it when anything changed.
func Open(ctx context.Context, root, dir string) (*Graph, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
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
	for _, f := range g.Files {
		g.byPath[f.Path] = f
		f.dir = path.Dir(f.Path)
		f.dirBase = path.Base(f.dir)
		f.stem = strings.TrimSuffix(path.Base(f.Path), path.Ext(f.Path))
		f.fam = family(f.Lang)
	}
	g.modules = readModules(g.Root, g.Files)
	g.linkImports()
}

// defsNamed lists the definitions of a name (impl blocks and constructors
// left out). The index behind it is built on first use: code_find,
// code_map and code_outline never need it.
func (g *Graph) defsNamed(name string) []defID {
	g.nameOnce.Do(g.indexNames)
	return g.defs[name]
}

// field is the declared type of field name of container (in family fam).
func (g *Graph) field(fam, container, name string) (*Local, bool) {
	g.nameOnce.Do(g.indexNames)
	l, ok := g.fields[fam+" "+container+" "+name]
	return l, ok
}

func (g *Graph) indexNames() {
	g.defs = map[string][]defID{}
	g.fields = map[string]*Local{}
	g.fieldNames = map[string]bool{}
	g.dirFiles = map[string][]int32{}
	for fi, f := range g.Files {
		if f.Lang == "go" {
			g.dirFiles[f.dir] = append(g.dirFiles[f.dir], int32(fi))
		}
		for li := range f.Fields {
			l := &f.Fields[li]
			if !f.structField(l) {
				continue // an anonymous struct's, found through its function (anonField)
			}
			g.fields[f.fam+" "+f.Defs[l.Def].Name+" "+l.Name] = l
			g.fieldNames[f.fam+" "+l.Name] = true
		}
		for di := range f.Defs {
			d := &f.Defs[di]
			if d.Kind == "impl" || d.Kind == "constructor" {
				continue
			}
			g.defs[d.Name] = append(g.defs[d.Name], defID{int32(fi), int32(di)})
		}
	}
}

// inDir lists the Go files of a folder.
func (g *Graph) inDir(dir string) []int32 {
	g.nameOnce.Do(g.indexNames)
	return g.dirFiles[dir]
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
	// Files are shared out among the cores; resolving reads the graph
	// and decodes only the file it works on.
	next := make(chan int32)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []defID
			for fi := range next {
				for _, r := range g.Files[fi].refs() {
					var sure int
					buf, sure = g.resolve(fi, r, buf[:0])
					if sure > guess || (sure == guess && len(buf) == 1) {
						// A guess through an unknown receiver is listed by
						// code_callers but does not make a definition look
						// more used.
						for _, id := range buf {
							atomic.AddInt32(&g.Files[id.file].Counts[id.def], 1)
						}
					}
				}
			}
		}()
	}
	for fi := range g.Files {
		next <- int32(fi)
	}
	close(next)
	wg.Wait()
}

// Count is how many places reference the definition.
func (f *File) Count(di int) int {
	if di < len(f.Counts) {
		return int(f.Counts[di])
	}
	return 0
}
