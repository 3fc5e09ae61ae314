package codegraph

import "strings"

// File is what the graph knows about one file of a repository. A file in a
// language the graph does not parse is kept with its stat only (Lang "").
type File struct {
	Path    string // slash-separated, relative to the repository root
	Lang    string // "" when not parsed
	Skipped string // why a file in a known language was not parsed (too large)
	Size    int64
	MTime   int64 // nanoseconds
	Hash    uint64

	Pkg     string   // Go package clause
	Imports []Import // Go imports
	Defs    []Def
	Locals  []Local  // variables and parameters, sorted by Name
	Fields  []Local  // typed members of classes and structs, sorted by Name
	Names   []string // the names and qualifiers of Refs, sorted
	Refs    []Ref    // one per (enclosing definition, name), sorted by Name

	// Counts holds, per definition, how many places of the repository
	// reference it; computed over the whole graph after every change.
	Counts []int32

	loaded, decoded    bool   // read from the store; its packed part decoded
	packed             string // Refs as stored, decoded on first use (with Names and Locals)
	packedNames        string // Names as stored
	packedLocals       string // Locals as stored
	dir, dirBase, stem string
	fam                string
}

// refs returns the file's references, decoding them on first use (most
// queries never need them).
func (f *File) refs() []Ref {
	if f.loaded && !f.decoded {
		f.decoded = true
		f.Names = strings.Split(f.packedNames, "\x00")
		// Damaged references or locals leave the file without them, as
		// when it was parsed; an index out of the file is never used.
		f.Refs, _ = unpackRefs(f.packed, len(f.Names), len(f.Defs))
		f.Locals = unpackLocals(f.packedLocals, len(f.Defs))
	}
	return f.Refs
}

// hasName reports whether the file uses name, without decoding it.
func (f *File) hasName(name string) bool {
	if !f.loaded || f.decoded {
		return f.findName(name) >= 0
	}
	s := f.packedNames
	for {
		i := strings.Index(s, name)
		if i < 0 {
			return false
		}
		end := i + len(name)
		if (i == 0 || s[i-1] == 0) && (end == len(s) || s[end] == 0) {
			return true
		}
		s = s[i+1:]
	}
}

// Import is one Go import: the name it is used by in the file and its path.
type Import struct {
	Alias string
	Path  string

	clause string // the package clause of the folder it names, when the graph holds it and differs from Alias
}

// Local is a variable, parameter or field whose type the source states
// (or, Guess, suggests: x = Foo() in Python), so x.name resolves to the
// method of that type.
type Local struct {
	Def   int32  // the definition it belongs to (a class for a field)
	Name  string // the variable
	Type  string // its type's bare name
	Pkg   string // the qualifier of the type (Go's package alias), if any
	Guess bool
	Nth   uint8 // Go, Guess: which result of the call it holds (a, b := f(): b is 1)
}

// Def is one definition.
type Def struct {
	Name      string
	Kind      string // func, method, type, struct, interface, class, enum, trait, impl, const, var, module, macro, constructor
	Container string // the receiver type, class, impl or trait a method belongs to
	Sig       string // the declaration without its body, one line
	Line      int32  // first line, 1-based
	End       int32  // last line
	Parent    int32  // index of the enclosing definition in the file, -1 none
}

// Ref flags.
const (
	refCall   uint8 = 1 << iota // the name is called
	refMember                   // the name is read through a qualifier (x.name, x::name)
	refBare                     // Go: that qualifier is a plain identifier (x.name, not a.x.name)
)

// Ref is one place a name is used: the first line it appears on within
// its enclosing definition.
type Ref struct {
	Name  int32 // index in File.Names
	Qual  int32 // index in File.Names of the qualifier's last part, -1 none
	Line  int32
	Def   int32 // enclosing definition, -1 the file's top level
	Flags uint8
}

// QualName is the definition's name with its container, e.g. Server.Start.
func (d *Def) QualName() string {
	if d.Container != "" {
		return d.Container + "." + d.Name
	}
	return d.Name
}

// classLike kinds hold methods.
func classLike(kind string) bool {
	switch kind {
	case "class", "interface", "struct", "trait", "impl", "enum":
		return true
	}
	return false
}

// findName returns the index of name in f.Names, -1 when absent.
func (f *File) findName(name string) int32 {
	f.refs()
	lo, hi := 0, len(f.Names)
	for lo < hi {
		m := (lo + hi) / 2
		if f.Names[m] < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(f.Names) && f.Names[lo] == name {
		return int32(lo)
	}
	return -1
}

// refsNamed returns the refs of name (Refs are sorted by Name).
func (f *File) refsNamed(name string) []Ref {
	i := f.findName(name)
	if i < 0 {
		return nil
	}
	refs := f.refs()
	lo, hi := 0, len(refs)
	for lo < hi {
		m := (lo + hi) / 2
		if refs[m].Name < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(refs) && refs[end].Name == i {
		end++
	}
	return refs[lo:end]
}

// container is the class-like name a position inside definition di belongs to.
func (f *File) container(di int32) string {
	for di >= 0 {
		d := &f.Defs[di]
		if d.Container != "" {
			return d.Container
		}
		if classLike(d.Kind) {
			return d.Name
		}
		di = d.Parent
	}
	return ""
}

// typeOf finds the type of variable name as seen inside definition di:
// the local of di or of the nearest definition enclosing it.
func (f *File) typeOf(di int32, name string) (*Local, bool) {
	if l, ok := nearest(f, f.Locals, di, name); ok {
		return l, true
	}
	if f.Lang == "go" {
		return nil, false // a Go field is only reached through a selector (anonField)
	}
	return nearest(f, f.Fields, di, name)
}

// anonField is a field of an anonymous struct declared in definition di
// or one enclosing it (Go: tests := []struct{ plan Plan }{...}).
func (f *File) anonField(di int32, name string) (*Local, bool) {
	if di < 0 {
		return nil, false
	}
	return nearest(f, f.Fields, di, name)
}

// structField reports whether l, a field, belongs to a declared type and
// not to an anonymous struct inside a function.
func (f *File) structField(l *Local) bool {
	return l.Def >= 0 && classLike(f.Defs[l.Def].Kind)
}

// nearest finds the entry of name whose definition is di or the closest
// one enclosing it (-1, the file's top level, last).
func nearest(f *File, ls []Local, di int32, name string) (*Local, bool) {
	lo, hi := 0, len(ls)
	for lo < hi {
		m := (lo + hi) / 2
		if ls[m].Name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(ls) || ls[lo].Name != name {
		return nil, false
	}
	for {
		for i := lo; i < len(ls) && ls[i].Name == name; i++ {
			if ls[i].Def == di {
				return &ls[i], true
			}
		}
		if di < 0 {
			return nil, false
		}
		di = f.Defs[di].Parent
	}
}
