package codegraph

import (
	"strings"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// receiverExpr names the receiver of x := <receiver>.M(...) in Go the way
// a guessed local's Pkg holds it: "T{}" for a composite literal of type T
// (pkg.T{}, (&T{}) too), "F()" or "v.F()" for a call; "" for anything
// else.
func receiverExpr(text string) string {
	text = strings.TrimSpace(text)
	for strings.HasPrefix(text, "(") && strings.HasSuffix(text, ")") {
		text = strings.TrimSpace(text[1 : len(text)-1])
	}
	text = strings.TrimPrefix(text, "&")
	brace, paren := strings.IndexByte(text, '{'), strings.IndexByte(text, '(')
	switch {
	case brace > 0 && (paren < 0 || brace < paren):
		name, _, ok := typeName(text[:brace])
		if !ok || !goIdent(name) {
			return ""
		}
		return name + "{}"
	case paren > 0:
		fn := text[:paren]
		recv, name, found := strings.Cut(fn, ".")
		if !goIdent(recv) || recv == "func" || found && !goIdent(name) {
			return ""
		}
		return fn + "()"
	}
	return ""
}

func goIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !identByte(s[i]) {
			return false
		}
	}
	return true
}

// resultIndex is the position of a Go local among the names left of a
// short variable declaration (a, b := f(): b is 1).
func resultIndex(n *ts.Node) uint8 {
	list := n.Parent()
	if list == nil || list.Kind() != "expression_list" {
		return 0
	}
	var at uint8
	for i := uint(0); i < list.NamedChildCount(); i++ {
		c := list.NamedChild(i)
		if c == nil || c.StartByte() >= n.StartByte() {
			break
		}
		at++
	}
	return at
}

// literalOrCallRecv is the receiver type of x := T{}.M() or x := v.F().M()
// (Pkg "T{}" or "v.F()"); ok false for any other Pkg.
func (g *Graph) literalOrCallRecv(f *File, loc *Local, depth int) (string, typeHome, bool) {
	if typ, lit := strings.CutSuffix(loc.Pkg, "{}"); lit {
		return typ, typeHome{}, true // the literal's package is not kept: any folder
	}
	if !strings.HasSuffix(loc.Pkg, "()") {
		return "", typeHome{}, false
	}
	if depth <= 0 {
		return "", typeHome{}, true
	}
	l, ok := callQual(loc.Def, loc.Pkg)
	if !ok {
		return "", typeHome{}, true
	}
	typ, home := g.guessTypeDepth(f, l, depth-1)
	return typ, home, true
}

// predeclared are Go's predeclared types: what a value of one of them
// calls is never the repository's (unless it declares the name itself).
var predeclared = map[string]bool{"error": true, "string": true, "bool": true, "byte": true, "rune": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true, "float32": true, "float64": true,
	"complex64": true, "complex128": true, "any": true}

// goResult is the nth result type of a Go function signature, with its
// package qualifier; "" when the signature does not say.
func goResult(sig string, nth int) string {
	rest := strings.TrimPrefix(sig, "func ")
	if strings.HasPrefix(rest, "(") { // a receiver
		rest = rest[closing(rest):]
	}
	i := strings.IndexByte(rest, '(')
	if i < 0 {
		return ""
	}
	rest = strings.TrimSpace(rest[i+closing(rest[i:]):])
	if !strings.HasPrefix(rest, "(") {
		if nth > 0 {
			return ""
		}
		return rest
	}
	n := closing(rest)
	if n > len(rest) || rest[n-1] != ')' {
		return ""
	}
	types := listTypes(rest[1 : n-1])
	if nth >= len(types) {
		return ""
	}
	return types[nth]
}

// listTypes lists the types of a Go parameter or result list, named or
// not, as written (package qualifiers kept): "a, b int, err error" is
// int, int, error.
func listTypes(list string) []string {
	parts := splitTop(list)
	named := false
	for _, p := range parts {
		if _, _, ok := nameAndType(p); ok {
			named = true
			break
		}
	}
	types := make([]string, len(parts))
	pending := 0
	for i, p := range parts {
		if !named {
			types[i] = strings.TrimSpace(p)
			continue
		}
		if _, t, ok := nameAndType(p); ok {
			for j := pending; j <= i; j++ {
				types[j] = t
			}
			pending = i + 1
		}
	}
	return types
}

// errorSeen reports whether err.Error() in file f, err an error, may call
// method d of file cf: d is an Error() string, declared in f's folder or
// in a package f imports. gopls counts a call through error as a call of
// the error types of the packages the caller can see, and no other.
func (g *Graph) errorSeen(f, cf *File, d *Def) bool {
	if d.Kind != "method" {
		return false
	}
	seen := cf.dir == f.dir
	for i := 0; i < len(f.Imports) && !seen; i++ {
		seen = g.pkgMatch(f.Imports[i].Path, cf.dir) > 0
	}
	return seen && goShape(d.Sig, d.Name) == "|string"
}
