package codegraph

import "strings"

// Python and TypeScript rules the measure against pyright and tsserver
// asked for (issue 37, docs/adr/0710).

// structural reports whether a family's calls through an interface are
// counted as calls of every type that has its methods by name (Go's
// implicit satisfaction). Python has no interfaces the graph sees, and a
// TypeScript caller holding an interface calls the interface's member:
// tsserver does not count a same-shaped class's method as called there.
func structural(fam string) bool { return fam != "js" && fam != "python" }

// attributeRead reports x.name, read and not called, with x of unknown
// type in Python or TypeScript: an attribute or property far more often
// than a method value, so not a caller of the methods of that name.
func attributeRead(lang string, r Ref, qual string) bool {
	switch lang {
	case "python", "typescript", "tsx", "javascript":
		return r.Flags&refCall == 0 && qual != "self" && qual != "this" && qual != "cls"
	}
	return false
}

// moduleInstance types x in x.name when x is a top-level constant of the
// file made by a constructor (TypeScript's const immer = new Immer()):
// the graph keeps such a constant as a definition, not as a local.
func moduleInstance(f *File, name string) (*Local, bool) {
	if f.fam != "js" {
		return nil, false
	}
	for i := range f.Defs {
		d := &f.Defs[i]
		if d.Parent >= 0 || d.Kind != "const" || d.Name != name {
			continue
		}
		_, value, ok := strings.Cut(d.Sig, "=")
		if !ok {
			return nil, false
		}
		value = strings.TrimSpace(value)
		for strings.HasPrefix(value, "/*") { // /* @__PURE__ */ new X()
			_, value, _ = strings.Cut(value, "*/")
			value = strings.TrimSpace(value)
		}
		rest, ok := strings.CutPrefix(value, "new ")
		if !ok {
			return nil, false
		}
		typ, _, _ := typeName(strings.TrimSpace(strings.SplitN(rest, "(", 2)[0]))
		if typ == "" {
			return nil, false
		}
		return &Local{Def: -1, Name: name, Type: typ}, true
	}
	return nil, false
}

// builtinMembers are the methods of the languages' own strings,
// collections, files and promises: x.name() with x of unknown type and
// one of these names calls the built-in far more often than a
// repository's method of that name, so the graph does not guess it.
var builtinMembers = map[string]map[string]bool{
	"python": words("get items keys values update pop append extend insert remove clear copy setdefault add discard " +
		"close read write readline readlines flush seek join split strip lstrip rstrip startswith endswith format replace " +
		"encode decode lower upper index count sort"),
	"js": words("forEach map filter reduce some every find findIndex includes indexOf push pop shift unshift splice " +
		"slice concat join sort reverse keys values entries has get set delete clear add then catch finally toString " +
		"valueOf apply call bind hasOwnProperty trim split replace startsWith endsWith match test exec next"),
}

// untypedBuiltin reports x.name() left unguessed: x's type unknown (not
// self, this or the method's own class) and name a built-in's method.
func untypedBuiltin(fam, name, qual, container string) bool {
	return builtinMembers[fam][name] && qual != "self" && qual != "this" && qual != "cls" && qual != container
}
