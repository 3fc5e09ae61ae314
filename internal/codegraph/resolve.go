package codegraph

import "strings"

func family(lang string) string {
	if l := languages[lang]; l != nil {
		return l.family
	}
	return ""
}

// resolve appends the definitions a reference most likely names and says
// how sure it is (typed or qualified: 6 and more; same file or folder: 4
// or 5; a guess: 2 or 3). The candidates of its name are scored by
// qualifier, container and distance and the best score is kept. A local
// variable resolves to nothing; x.name resolves through the type of x
// when a declaration states it; a qualified Go name through its import.
func (g *Graph) resolve(fi int32, r Ref, out []defID) ([]defID, int) {
	f := g.Files[fi]
	name := f.Names[r.Name]
	cands := g.defsNamed(name)
	if len(cands) == 0 {
		return out, 0
	}
	qual := ""
	if r.Qual >= 0 {
		qual = f.Names[r.Qual]
	}
	isGo := f.Lang == "go"
	strict := f.Lang == "java" || f.Lang == "rust"
	member := r.Flags&refMember != 0
	if !member && (f.Lang != "java" || r.Flags&refCall == 0) {
		// A local variable or parameter of that name hides the definition
		// (a field does not: it is reached as this.name or self.name).
		if loc, local := f.typeOf(r.Def, name); local && (loc.Def < 0 || !classLike(f.Defs[loc.Def].Kind)) {
			return out, 0
		}
	}
	here := ""
	if r.Def >= 0 {
		here = f.container(r.Def)
	}
	if member && here != "" && (qual == "self" || qual == "this" || qual == "cls") && (f.fam == "python" || f.fam == "js") {
		if got, ok := g.inherited(f.fam, here, name, out); ok {
			return got, 6
		}
	}
	var importPath string
	errorValue := false // err.Error(), err an error (gotypes_assign.go)
	if isGo && member {
		importPath = g.importOf(f, qual)
	}
	if member && qual != "" && importPath == "" {
		if strict && r.Flags&refCall == 0 {
			return out, 0 // a Java or Rust method is only called; x.name is a field
		}
		loc, local := f.typeOf(r.Def, qual)
		ok := local
		if isGo && !ok {
			loc, ok = callQual(r.Def, qual) // x.F().name: typed by F's result
			if ok && len(g.modules) > 0 && len(g.defsNamed(loc.Type)) == 0 {
				return out, 0 // F is not the repository's, so neither is what it returns
			}
		}
		if !ok || loc.Type == "" {
			loc, ok = g.field(f.fam, here, qual)
		}
		if isGo && (!ok || loc.Type == "") && r.Flags&refBare == 0 {
			loc, ok = f.anonField(r.Def, qual) // a.f.name, f a field of an anonymous struct of this function
		}
		if !ok || loc.Type == "" {
			if l, found := moduleInstance(f, qual); found {
				loc, ok = l, true
			}
		}
		typ, where := "", typeHome{}
		if isGo && !local && (!ok || loc.Type == "") && r.Flags&refBare != 0 {
			typ, where = g.varType(f, &Local{Def: r.Def, Type: qual, Pkg: sameVar}) // V.name, V a package variable
		}
		if isGo && typ == "" && g.outside(f, qual, local, loc, ok) {
			return out, 0 // a guess the graph can disprove: x's type is not the repository's
		}
		typed := ok && loc.Type != "" || typ != ""
		if typed && typ == "" {
			typ = loc.Type
			switch {
			case loc.Guess:
				typ, where = g.guessType(f, loc)
			case isGo && loc.Pkg != "":
				where.importPath = g.importOf(f, loc.Pkg)
			case isGo:
				where.dir = f.dir
			}
		} else if isGo && !local && !typed {
			typ, where = g.agreedField(f.fam, qual) // a.f.name: every field f of the repository has one type
			typed = typ != ""
		}
		if typed {
			n := len(out)
			for _, id := range cands {
				cf, d := g.def(id)
				if typ == "" || cf.fam != f.fam || d.Container != typ || d.Kind != "method" || !g.holds(where, cf) {
					continue
				}
				out = append(out, id)
			}
			if len(out) == n && isGo && typ != "" {
				out = g.promoted(f.fam, typ, where, name, out)
			}
			// A declared Go or Java type without that method: the method
			// is promoted from a type of outside or the type is not ours.
			if len(out) > n || (typed && (loc == nil || !loc.Guess) && (isGo || f.Lang == "java")) {
				return out, 7
			}
			if isGo && predeclared[typ] && len(g.defsNamed(typ)) == 0 {
				if typ != "error" || name != "Error" {
					return out, 0 // a predeclared type's value calls none of the repository's methods
				}
				errorValue = true
			}
		}
	}
	best := 0
	start := len(out)
	for _, id := range cands {
		cf, d := g.def(id)
		if cf.fam != f.fam {
			continue
		}
		if errorValue && !g.errorSeen(f, cf, d) {
			continue
		}
		s := 0
		sameFile := id.file == fi
		sameDir := cf.dir == f.dir
		method := d.Container != "" && d.Kind == "method"
		switch {
		case importPath != "":
			// pkg.Name: a top-level definition of the imported package.
			if n := g.pkgMatch(importPath, cf.dir); !method && d.Parent < 0 && n > 0 {
				s = n
			}
		case method && member && (isGo && r.Flags&refCall == 0 || attributeRead(f.Lang, r, qual)):
			// x.name not called, x unknown: a field far more often than a
			// method value.
		case method && member && untypedBuiltin(f.fam, name, qual, d.Container):
			// a built-in's method, not guessed
		case method && member:
			s = 2
			if qual == d.Container || ((qual == "self" || qual == "this") && here == d.Container) {
				s = 5
			}
			if sameFile && !errorValue { // err.Error() stays a guess, one error type in the file or not
				s++
			}
		case method:
			// A bare name in Go never names a method (func (c *C) Error() *Error: the type).
			if !isGo && here != "" && here == d.Container && (!strict || r.Flags&refCall != 0) {
				s = 5
			}
		case member:
			if !isGo && qual != "" && (qual == d.Container || qual == cf.stem || qual == cf.dirBase || inModule(cf, d, qual)) {
				s = 4 // a static member, module.name, a Rust path, a C++ namespace
			}
		default:
			switch {
			case sameFile:
				s = 5
			case !isGo && importedFrom(f, name, cf):
				s = 5 // from shapes import Circle; import { Router } from "./util"
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
	if best <= 3 && len(out)-start > maxAmbiguous {
		return out[:start], 0 // x.name with x unknown and many such methods: no guess
	}
	return out, best
}

// outside reports a Go receiver whose type cannot be the repository's:
// x := pkg.F() with pkg a package outside the repository's modules, or an
// exported qualifier that no definition or field of the repository names
// (w.Body.String(): a field of a type from outside).
func (g *Graph) outside(f *File, qual string, local bool, loc *Local, ok bool) bool {
	if len(g.modules) == 0 {
		return false // which packages are ours is not known
	}
	if ok && loc.Guess && loc.Pkg != "" {
		if p := g.importOf(f, loc.Pkg); p != "" {
			_, _, ours := g.moduleOf(p)
			return !ours
		}
	}
	if local || ok || qual == "" || !isUpper(qual[0]) {
		return false
	}
	return len(g.defsNamed(qual)) == 0 && !g.fieldNames[f.fam+" "+qual]
}

// typeHome narrows where a type is declared: a folder, or (Go) the
// package of an import path; neither set, anywhere.
type typeHome struct{ dir, importPath string }

func (g *Graph) holds(h typeHome, f *File) bool {
	switch {
	case h.importPath != "":
		return g.pkgMatch(h.importPath, f.dir) > 0
	case h.dir != "":
		return f.dir == h.dir
	}
	return true
}

// guessType is the type a call of loc.Type returns: the class itself for
// a constructor call, else the result its signature declares.
func (g *Graph) guessType(f *File, loc *Local) (string, typeHome) {
	return g.guessTypeDepth(f, loc, maxChain)
}

// maxChain bounds how many guessed locals typing one follows
// (c := connect(); p := c.Pool(); r := p.Get(); r.M()).
const maxChain = 3

func (g *Graph) guessTypeDepth(f *File, loc *Local, depth int) (string, typeHome) {
	if loc.Pkg == sameVar {
		return g.varType(f, loc)
	}
	if f.Lang == "go" && loc.Pkg != "" && g.importOf(f, loc.Pkg) == "" {
		return g.methodResult(f, loc, depth)
	}
	for _, id := range g.defsNamed(loc.Type) {
		cf, d := g.def(id)
		if cf.fam != f.fam {
			continue
		}
		if f.Lang == "go" {
			if loc.Pkg != "" && g.pkgMatch(g.importOf(f, loc.Pkg), cf.dir) == 0 {
				continue
			}
			if loc.Pkg == "" && cf.dir != f.dir {
				continue
			}
		}
		if classLike(d.Kind) {
			if cf.Lang == "go" {
				return d.Name, typeHome{dir: cf.dir}
			}
			return d.Name, typeHome{}
		}
		if d.Kind != "func" && d.Kind != "method" {
			continue
		}
		sig := resultType(cf.Lang, d.Sig)
		if cf.Lang == "go" {
			sig = goResult(d.Sig, int(loc.Nth))
		}
		name, pkg, ok := typeName(sig)
		if !ok {
			continue
		}
		if name == "Self" {
			name = d.Container
		}
		if cf.Lang != "go" {
			return name, typeHome{}
		}
		if pkg == "" {
			return name, typeHome{dir: cf.dir}
		}
		if p := g.importOf(cf, pkg); p != "" {
			return name, typeHome{importPath: p}
		}
	}
	return "", typeHome{}
}

// sameVar marks a Go local given the value of another variable (x := y):
// its Type names y.
const sameVar = "="

// varType is the declared type of the variable y of x := y: a variable of
// the file, or a package variable of the folder (var Y T = ...).
func (g *Graph) varType(f *File, loc *Local) (string, typeHome) {
	home := func(l *Local) typeHome {
		if l.Pkg == "" {
			return typeHome{dir: f.dir}
		}
		return typeHome{importPath: g.importOf(f, l.Pkg)}
	}
	if l, ok := f.typeOf(loc.Def, loc.Type); ok {
		if l.Guess || l.Type == "" || l == loc {
			return "", typeHome{}
		}
		return l.Type, home(l)
	}
	for _, id := range g.defsNamed(loc.Type) {
		cf, d := g.def(id)
		if cf.dir != f.dir || cf.Lang != "go" || d.Kind != "var" {
			continue
		}
		rest := strings.Fields(strings.TrimPrefix(d.Sig, "var "+d.Name))
		if len(rest) == 0 || rest[0] == "=" {
			return "", typeHome{}
		}
		name, pkg, ok := typeName(rest[0])
		if !ok {
			return "", typeHome{}
		}
		l := Local{Type: name, Pkg: pkg}
		return name, home(&l)
	}
	for _, fi := range g.inDir(f.dir) { // var ( Y T = ... ) in another file
		of := g.Files[fi]
		if !of.hasName(loc.Type) {
			continue // the file never writes the name (its locals stay packed)
		}
		of.refs()
		if l, ok := nearest(of, of.Locals, -1, loc.Type); ok && !l.Guess && l.Type != "" && l.Def < 0 {
			return l.Type, home(l)
		}
	}
	return "", typeHome{}
}

// methodResult is the type x := v.M() gives x in Go: the result of
// method M of v's declared type, or, v's type unknown, the result every
// method M of the repository agrees on; "" when they disagree.
func (g *Graph) methodResult(f *File, loc *Local, depth int) (string, typeHome) {
	recv, recvHome := g.receiverOf(f, loc, depth)
	typ, home := "", typeHome{}
	for _, id := range g.defsNamed(loc.Type) {
		cf, d := g.def(id)
		if cf.fam != f.fam || d.Kind != "method" || recv != "" && (d.Container != recv || !g.holds(recvHome, cf)) {
			continue
		}
		name, pkg, ok := typeName(goResult(d.Sig, int(loc.Nth)))
		if !ok {
			return "", typeHome{}
		}
		h := typeHome{dir: cf.dir}
		if pkg != "" {
			if h = (typeHome{importPath: g.importOf(cf, pkg)}); h.importPath == "" {
				return "", typeHome{}
			}
		}
		if typ != "" && (name != typ || h != home) {
			return "", typeHome{}
		}
		typ, home = name, h
	}
	return typ, home
}

// receiverOf is the type of v in x := v.M(), with where it is declared:
// v's declaration, or the call or literal v is (T{}.M(), c.Conn().M()),
// or v's own guessed type; "" when unknown.
func (g *Graph) receiverOf(f *File, loc *Local, depth int) (string, typeHome) {
	if recv, home, ok := g.literalOrCallRecv(f, loc, depth); ok {
		return recv, home
	}
	l, ok := f.typeOf(loc.Def, loc.Pkg)
	switch {
	case !ok:
		return "", typeHome{}
	case !l.Guess && l.Pkg == sameVar:
		return g.varType(f, l)
	case !l.Guess && l.Pkg != "":
		return l.Type, typeHome{importPath: g.importOf(f, l.Pkg)}
	case !l.Guess:
		return l.Type, typeHome{dir: f.dir}
	case l != loc && depth > 0:
		return g.guessTypeDepth(f, l, depth-1) // v itself from a call: v := c.Conn()
	}
	return "", typeHome{}
}

// resultType is what a signature says its function returns (the first
// result in Go), "" when it does not say.
func resultType(lang, sig string) string {
	switch lang {
	case "python", "rust":
		if i := strings.LastIndex(sig, "->"); i >= 0 {
			return strings.TrimSpace(sig[i+2:])
		}
		return ""
	case "go":
		return goResult(sig, 0)
	case "typescript", "tsx", "javascript":
		i := strings.IndexByte(sig, '(')
		if i < 0 {
			return ""
		}
		rest := strings.TrimSpace(sig[i+closing(sig[i:]):])
		if r, ok := strings.CutPrefix(rest, ":"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r), "Promise<"))
		}
	}
	return ""
}

// closing is the length of the bracketed group s starts with.
func closing(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// guess is the best score of x.name with x of unknown type in another
// file; resolve scores it 2 (3 in the same file).
const guess = 3

// maxAmbiguous is how many same-named methods a call through an unknown
// receiver may resolve to before it resolves to none.
const maxAmbiguous = 6

// importOf is the path of the import file f uses by name alias, "" when
// none: the name the file gives it, else its package clause when the
// graph holds it, else the name its path suggests.
func (g *Graph) importOf(f *File, alias string) string {
	for _, im := range f.Imports {
		if im.clause == alias || im.clause == "" && im.Alias == alias {
			return im.Path
		}
	}
	return ""
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

// importedFrom reports whether file f imports name from the module that
// file cf is (Python's from m import name, JavaScript's import { name }
// from "./m"), compared by the module's last part.
func importedFrom(f *File, name string, cf *File) bool {
	for _, im := range f.Imports {
		if im.Alias != name {
			continue
		}
		m := strings.TrimSuffix(im.Path, "/index")
		m = m[strings.LastIndexAny(m, "./")+1:]
		if m == "" {
			m = strings.Trim(im.Path, "./")
		}
		if m != "" && (m == cf.stem || (cf.stem == "__init__" || cf.stem == "index" || cf.stem == "mod") && m == cf.dirBase) {
			return true
		}
	}
	return false
}

// inModule reports whether d sits in a module or namespace named name
// (geo::total_area, utils::helper with mod utils in the file).
func inModule(f *File, d *Def, name string) bool {
	for p := d.Parent; p >= 0; p = f.Defs[p].Parent {
		if f.Defs[p].Kind == "module" && f.Defs[p].Name == name {
			return true
		}
	}
	return false
}
