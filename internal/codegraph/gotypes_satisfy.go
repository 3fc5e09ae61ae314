package codegraph

import "strings"

// anyShape stands for a method whose signature the graph cannot compare
// (cut short, spread over lines, or two same-named types disagreeing).
const anyShape = "*"

// methodShapes indexes, per "family container", each method's signature
// shape, built on first use.
func (g *Graph) methodShapes() map[string]map[string]string {
	g.typeOnce.Do(g.indexTypes)
	return g.methods
}

func (g *Graph) indexTypes() {
	g.indexEmbeds()
	g.indexAgreed()
	g.methods = map[string]map[string]string{}
	for _, f := range g.Files {
		for i := range f.Defs {
			d := &f.Defs[i]
			if d.Container == "" || classLike(d.Kind) {
				continue
			}
			k := f.fam + " " + d.Container
			m := g.methods[k]
			if m == nil {
				m = map[string]string{}
				g.methods[k] = m
			}
			shape := anyShape
			if f.Lang == "go" {
				shape = goShape(d.Sig, d.Name)
			}
			if old, ok := m[d.Name]; ok && old != shape {
				shape = anyShape // two types of one name in different packages
			}
			m[d.Name] = shape
		}
	}
}

// goShape reduces a Go method or interface method signature to the types
// of its parameters and results, without names or package qualifiers:
// "func (c *Conn) Exec(ctx context.Context, sql string, args ...any)
// (pgconn.CommandTag, error)" is "Context,string,...any|CommandTag,error".
// A signature it cannot read whole gives anyShape.
func goShape(sig, name string) string {
	if strings.HasSuffix(sig, "…") {
		return anyShape
	}
	rest := sig
	if strings.HasPrefix(rest, "func ") {
		rest = strings.TrimPrefix(rest, "func ")
		if strings.HasPrefix(rest, "(") { // the receiver
			rest = strings.TrimSpace(rest[closing(rest):])
		}
	}
	rest, ok := strings.CutPrefix(rest, name)
	if !ok {
		return anyShape
	}
	if i := strings.IndexByte(rest, '('); i > 0 {
		rest = rest[i:] // type parameters of a generic method cannot occur; skip anything odd
	}
	if !strings.HasPrefix(rest, "(") {
		return anyShape
	}
	n := closing(rest)
	if n > len(rest) || rest[n-1] != ')' {
		return anyShape
	}
	params := paramTypes(rest[1 : n-1])
	results := strings.TrimSpace(rest[n:])
	if strings.HasPrefix(results, "(") {
		m := closing(results)
		if m > len(results) || results[m-1] != ')' {
			return anyShape
		}
		results = paramTypes(results[1 : m-1])
	} else {
		results = bareType(results)
	}
	return params + "|" + results
}

// paramTypes lists the types of a Go parameter list, named or not.
func paramTypes(list string) string {
	types := listTypes(list)
	for i, t := range types {
		types[i] = bareType(t)
	}
	return strings.Join(types, ",")
}

// nameAndType splits "name Type" (ok false for a type alone).
func nameAndType(p string) (string, string, bool) {
	p = strings.TrimSpace(p)
	i := strings.IndexByte(p, ' ')
	if i <= 0 {
		return "", "", false
	}
	name := p[:i]
	if name == "chan" || name == "func" || name == "<-chan" || name == "interface" || name == "struct" {
		return "", "", false
	}
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !identByte(c) {
			return "", "", false
		}
	}
	return name, strings.TrimSpace(p[i+1:]), true
}

// identByte reports whether c may appear in a Go identifier (any byte of a
// multi-byte letter counts).
func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// splitTop splits at the commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if last := strings.TrimSpace(s[start:]); last != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}

// bareType drops spaces and package qualifiers: "map[string] *pgx.Conn"
// is "map[string]*Conn".
func bareType(t string) string {
	out := make([]byte, 0, len(t))
	ident := -1 // where the identifier being copied starts in out
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case isIdentByte(c):
			if ident < 0 {
				ident = len(out)
			}
			out = append(out, c)
		case c == '.' && ident >= 0 && (i+1 >= len(t) || t[i+1] != '.'):
			out, ident = out[:ident], -1 // pkg.Name: forget pkg
		case c == ' ' || c == '\t':
			if len(out) > 0 && isIdentByte(out[len(out)-1]) && i+1 < len(t) && isIdentByte(t[i+1]) {
				out = append(out, ' ') // chan int, func() error
			}
			ident = -1
		default:
			out, ident = append(out, c), -1
		}
	}
	return string(out)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// sameShape reports whether a method of shape have can implement one of
// shape want (an unreadable one is given the benefit of the doubt).
func sameShape(have, want string) bool {
	return have == want || have == anyShape || want == anyShape
}
