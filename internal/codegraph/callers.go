package codegraph

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// CallersArgs are code_callers' arguments.
type CallersArgs struct {
	Symbol    string `json:"symbol"`
	Direction string `json:"direction"`
	Depth     int    `json:"depth"`
	In        string `json:"in"`
	Page      int    `json:"page"`
}

const (
	maxTargets  = 5  // definitions of one name shown
	maxPerLevel = 25 // edges listed under one definition
)

// Callers lists what references a symbol (direction in) or what it
// references (out), depth levels deep, indented by level.
func Callers(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a CallersArgs
	if err := decode(raw, &a); err != nil {
		return errorf("%v", err)
	}
	a.Symbol = strings.TrimSpace(a.Symbol)
	if a.Symbol == "" {
		return errorf("symbol: is required (a name, or Type.name)")
	}
	switch a.Direction {
	case "":
		a.Direction = "in"
	case "in", "out":
	default:
		return errorf("direction: must be in or out, not %q", a.Direction)
	}
	if a.Depth == 0 {
		a.Depth = 1
	}
	if a.Depth < 1 || a.Depth > 3 {
		return errorf("depth: must be 1, 2 or 3, not %d", a.Depth)
	}
	if a.Page == 0 {
		a.Page = 1
	}
	if a.Page < 1 {
		return errorf("page: must be 1 or more, not %d", a.Page)
	}
	t, err := env.byPath("in", a.In)
	if err != nil {
		return errorf("%v", err)
	}
	if r, ok := env.unparsedFile(t); ok {
		return r
	}
	g, err := env.open(ctx, t)
	if err != nil {
		return errorf("code graph of %s: %v", t.name, err)
	}
	meta := map[string]any{"repository": t.name}
	targets := g.lookup(a.Symbol, t.scope)
	if len(targets) == 0 {
		meta["hits"] = 0
		text := fmt.Sprintf("no definition named %s in %s", a.Symbol, env.show(g, t.scope))
		if like := g.similar(a.Symbol, 5); len(like) > 0 {
			text += "; similar: " + strings.Join(like, ", ")
		}
		return Result{Text: text, Meta: meta}
	}
	out := newLines(env.maxBytes(), "; pass in to narrow, or a qualified symbol (Type.name)")
	more := len(targets) - maxTargets
	if more > 0 {
		targets = targets[:maxTargets]
	}
	hits, left := 0, 0
	arrow := "←"
	if a.Direction == "out" {
		arrow = "→"
	}
	for _, id := range targets {
		f, d := g.def(id)
		out.add("%s %s  %s:%s  (%s)", d.Kind, d.QualName(), env.show(g, f.Path), span(d), plural(f.Count(int(id.def)), "ref", "refs"))
		seen := map[defID]bool{id: true}
		var walk func(id defID, level int)
		walk = func(id defID, level int) {
			var edges []edge
			if a.Direction == "in" {
				edges = g.callersOf(id)
			} else {
				edges = g.calleesOf(id)
			}
			indent := strings.Repeat("  ", level)
			skip := 0
			if level == 1 {
				skip = min((a.Page-1)*maxPerLevel, len(edges))
				if skip > 0 {
					out.add("%s(page %d: %d edges of %d before these)", indent, a.Page, skip, len(edges))
				}
			}
			for i, e := range edges[skip:] {
				if i == maxPerLevel {
					rest := len(edges) - skip - i
					left += rest
					how := fmt.Sprintf("page %d lists them", a.Page+1)
					if level > 1 {
						how = "code_callers " + g.Files[id.file].Defs[id.def].QualName() + " lists them"
					}
					out.add("%s… %d more of %d not listed (%s; %s)", indent, rest, len(edges), how, g.whereRest(edges[skip+i:]))
					break
				}
				hits++
				if e.external != "" {
					why := "not in the repository"
					if e.guess {
						why = "not resolved; code_find " + e.external[strings.LastIndex(e.external, ".")+1:] + " lists the definitions of that name"
					}
					out.add("%s%s %s (%s)", indent, arrow, e.external, why)
					continue
				}
				ef := g.Files[e.file]
				if e.def < 0 {
					out.add("%s%s (top level of %s)  %s:%d", indent, arrow, path.Base(ef.Path), env.show(g, ef.Path), e.line)
					continue
				}
				ed := &ef.Defs[e.def]
				via := ""
				switch {
				case e.impl:
					via = "  (calls " + e.via + ", an implementation)"
				case e.via != "":
					via = "  (through " + e.via + ")"
				}
				switch {
				case e.guess && e.byName:
					via += "  (guess: by name only)"
				case e.guess:
					via += "  (guess: receiver of unknown type)"
				}
				out.add("%s%s %s  %s:%d%s", indent, arrow, ed.QualName(), env.show(g, ef.Path), e.line, via)
				next := defID{e.file, e.def}
				if level < a.Depth && !seen[next] && !out.full() && (a.Direction == "in" || !classLike(ed.Kind)) {
					seen[next] = true
					walk(next, level+1)
				}
			}
			if len(edges) == 0 && level == 1 {
				if a.Direction == "in" {
					out.add("  (nothing in the repository references it)")
				} else {
					out.add("  (it references nothing in the repository)")
				}
			}
		}
		walk(id, 1)
	}
	if more > 0 {
		out.add("%d more definitions named %s; qualify it (Type.name) or pass in", more, a.Symbol)
	}
	meta["hits"] = hits
	if left > 0 {
		meta["not_listed"] = left
	}
	return Result{Text: out.String(), Meta: meta}
}

// whereRest says where the edges a cap left out are, so a narrower
// question can aim at them: "in api (9), store (3)".
func (g *Graph) whereRest(rest []edge) string {
	count := map[string]int{}
	for _, e := range rest {
		if e.external != "" {
			count["(outside)"]++
			continue
		}
		count[g.Files[e.file].dir]++
	}
	dirs := make([]string, 0, len(count))
	for d := range count {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool {
		if count[dirs[i]] != count[dirs[j]] {
			return count[dirs[i]] > count[dirs[j]]
		}
		return dirs[i] < dirs[j]
	})
	parts := make([]string, 0, 4)
	for _, d := range dirs[:min(len(dirs), 4)] {
		parts = append(parts, fmt.Sprintf("%s (%d)", d, count[d]))
	}
	more := ""
	if len(dirs) > 4 {
		more = ", …"
	}
	return "in " + strings.Join(parts, ", ") + more
}

// edge is one reference: the place (file, enclosing definition, line) and,
// for an outgoing reference to nothing in the graph, the name it calls.
type edge struct {
	file, def int32
	line      int32
	external  string
	via       string // the interface method the reference goes through (impl: the implementation it calls)
	impl      bool
	guess     bool // through a receiver of unknown type, or by name only
	byName    bool // the guess is a plain name, not x.name
}

// lookup finds the definitions a symbol names, "Name" or "Qual.Name" (the
// qualifier a container, a package folder or a file name), inside scope;
// the most referenced first.
func (g *Graph) lookup(symbol, scope string) []defID {
	name, qual := symbol, ""
	for _, sep := range []string{"::", ".", "#"} {
		if i := strings.LastIndex(symbol, sep); i > 0 {
			qual, name = symbol[:i], symbol[i+len(sep):]
			break
		}
	}
	if i := strings.LastIndexAny(qual, ".:/"); i >= 0 {
		qual = qual[i+1:]
	}
	var out []defID
	for _, id := range g.defsNamed(name) {
		f, d := g.def(id)
		if !inScope(scope, f.Path) {
			continue
		}
		if qual != "" && qual != d.Container && qual != path.Base(path.Dir(f.Path)) &&
			qual != strings.TrimSuffix(path.Base(f.Path), path.Ext(f.Path)) && qual != f.Pkg {
			continue
		}
		out = append(out, id)
	}
	sort.SliceStable(out, func(i, j int) bool {
		fi, _ := g.def(out[i])
		fj, _ := g.def(out[j])
		return fi.Count(int(out[i].def)) > fj.Count(int(out[j].def))
	})
	return out
}

// similar names definitions whose name contains the symbol's, case aside.
func (g *Graph) similar(symbol string, n int) []string {
	if i := strings.LastIndexAny(symbol, ".:#"); i >= 0 {
		symbol = symbol[i+1:]
	}
	want := strings.ToLower(symbol)
	var out []string
	g.nameOnce.Do(g.indexNames)
	for name := range g.defs {
		if strings.Contains(strings.ToLower(name), want) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// callersOf lists the places that reference a definition, by file and
// line; for a method, also the calls through an interface of the
// repository that its type satisfies (by method names).
func (g *Graph) callersOf(id defID) []edge {
	out := g.directCallers(id)
	f, d := g.def(id)
	if d.Container == "" || classLike(d.Kind) || !structural(f.fam) {
		return out
	}
	if g.isInterface(f, d) {
		// Calls of the implementations call it too, as far as a caller
		// holding the interface can tell.
		for _, other := range g.defsNamed(d.Name) {
			of, od := g.def(other)
			// A wider interface (Rows for CopyFromSource) counts as an
			// implementation, as gopls counts it.
			if other == id || of.fam != f.fam || od.Container == "" || od.Container == d.Container || !g.satisfies(od.Container, d.Container, f.fam) {
				continue
			}
			for _, e := range g.directCallers(other) {
				e.via, e.impl = od.QualName(), true
				out = append(out, e)
			}
		}
		return out
	}
	for _, other := range g.defsNamed(d.Name) {
		of, od := g.def(other)
		if other == id || of.fam != f.fam || od.Container == "" || od.Container == d.Container {
			continue
		}
		if !g.isInterface(of, od) || !g.satisfies(d.Container, od.Container, f.fam) {
			continue
		}
		for _, e := range g.directCallers(other) {
			e.via = od.QualName()
			out = append(out, e)
		}
	}
	return out
}

// isInterface reports whether d is declared inside an interface or trait.
func (g *Graph) isInterface(f *File, d *Def) bool {
	if d.Parent < 0 {
		return false
	}
	k := f.Defs[d.Parent].Kind
	return k == "interface" || k == "trait"
}

// satisfies reports whether type t has a method of every name interface
// iface declares, of the same signature in Go (parameter and result types,
// package qualifiers aside); by names only elsewhere.
func (g *Graph) satisfies(t, iface, fam string) bool {
	want := g.methodSet(fam, iface)
	if len(want) == 0 {
		return false
	}
	have := g.methodSet(fam, t)
	for name, shape := range want {
		got, ok := have[name]
		if !ok || !sameShape(got, shape) {
			return false
		}
	}
	return true
}

// directCallers lists the places whose reference resolves to id.
func (g *Graph) directCallers(id defID) []edge {
	_, d := g.def(id)
	var out []edge
	var buf []defID
	for fi, f := range g.Files {
		if !f.hasName(d.Name) {
			continue
		}
		for _, r := range f.refsNamed(d.Name) {
			var sure int
			buf, sure = g.resolve(int32(fi), r, buf[:0])
			for _, got := range buf {
				if got == id && !calledFrom(out, int32(fi), r.Def) {
					out = append(out, edge{file: int32(fi), def: r.Def, line: r.Line, guess: sure < guess || sure == guess && len(buf) > 1,
						byName: r.Flags&refMember == 0})
					break
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return g.Files[out[i].file].Path < g.Files[out[j].file].Path
		}
		return out[i].line < out[j].line
	})
	return out
}

// calledFrom reports whether edges already hold a reference from
// definition def of file fi (a Go definition keeps one reference per
// name and qualifier: a.Close() and b.Close() may reach one method).
func calledFrom(edges []edge, fi, def int32) bool {
	for i := len(edges) - 1; i >= 0 && edges[i].file == fi; i-- {
		if edges[i].def == def {
			return true
		}
	}
	return false
}

// calleesOf lists what a definition (and what nests in it) references:
// definitions of the repository by where they are, then the calls it makes
// to names the repository does not define.
func (g *Graph) calleesOf(id defID) []edge {
	f := g.Files[id.file]
	inside := func(di int32) bool {
		for ; di >= 0; di = f.Defs[di].Parent {
			if di == id.def {
				return true
			}
		}
		return false
	}
	refs := make([]Ref, 0, 16)
	for _, r := range f.refs() {
		if inside(r.Def) {
			refs = append(refs, r)
		}
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].Line < refs[j].Line })
	seen := map[defID]bool{id: true}
	seenExt := map[string]bool{}
	var out, ext []edge
	var buf []defID
	for _, r := range refs {
		var sure int
		buf, sure = g.resolve(id.file, r, buf[:0])
		ambiguous := sure <= guess && len(buf) > 1
		if ambiguous {
			buf = buf[:0] // x.name, x unknown, several such methods: say the call, not a list of guesses
		}
		if len(buf) == 0 {
			if r.Flags&refCall != 0 || ambiguous {
				name := f.Names[r.Name]
				if r.Qual >= 0 {
					name = f.Names[r.Qual] + "." + name
				}
				if !seenExt[name] {
					seenExt[name] = true
					ext = append(ext, edge{external: name, guess: ambiguous || len(g.defsNamed(f.Names[r.Name])) > 0})
				}
			}
			continue
		}
		for _, got := range buf {
			if seen[got] {
				continue
			}
			seen[got] = true
			gd := &g.Files[got.file].Defs[got.def]
			out = append(out, edge{file: got.file, def: got.def, line: gd.Line, guess: sure < guess, byName: r.Flags&refMember == 0})
		}
	}
	return append(out, ext...)
}
