package codegraph

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// parser turns source into definitions and references. It holds one
// tree-sitter parser per language and is not safe for concurrent use.
type parser struct {
	ts     map[string]*ts.Parser
	cursor *ts.QueryCursor
}

func newParser() *parser {
	return &parser{ts: map[string]*ts.Parser{}, cursor: ts.NewQueryCursor()}
}

func (p *parser) close() {
	for _, tp := range p.ts {
		tp.Close()
	}
	p.cursor.Close()
}

type rawDef struct {
	start, end, nameAt uint32
	name, kind, recv   string
	sig                string
}

type rawLocal struct {
	at             uint32
	name, typ, pkg string
	guess, field   bool
	nth            uint8 // Go: which result of the call (a, b := f())
}

type rawRef struct {
	at         uint32
	name, qual string
	flags      uint8
	plain      bool
}

// parse fills f's definitions and references from src.
func (p *parser) parse(f *File, src []byte) error {
	l := languages[f.Lang]
	if l == nil {
		return fmt.Errorf("no grammar for %q", f.Lang)
	}
	if err := l.load(); err != nil {
		return fmt.Errorf("%s query: %w", l.name, err)
	}
	if len(src) > maxParseBytes {
		return fmt.Errorf("%d bytes, more than the %d parsed", len(src), maxParseBytes)
	}
	tp := p.ts[l.name]
	if tp == nil {
		tp = ts.NewParser()
		if err := tp.SetLanguage(l.lang); err != nil {
			return err
		}
		p.ts[l.name] = tp
	}
	tree := tp.Parse(src, nil)
	if tree == nil {
		return errors.New("parse failed")
	}
	defer tree.Close()
	root := tree.RootNode()

	var defs []rawDef
	refs := map[uint32]*rawRef{}
	dropped := map[uint32]bool{}
	var locals []rawLocal
	var skips [][2]uint32
	matches := p.cursor.Matches(l.q, root, src)
	for m := matches.Next(); m != nil; m = matches.Next() {
		var defNode, nameNode, recvNode, localNode, typeNode, pkgNode, recvExprNode *ts.Node
		sameNode, embed, elem := false, false, false
		var kind string
		var field, guess bool
		for i := range m.Captures {
			c := m.Captures[i]
			node := c.Node
			switch cn := l.names[c.Index]; {
			case strings.HasPrefix(cn, "def."):
				defNode, kind = &node, cn[4:]
			case cn == "name":
				nameNode = &node
			case cn == "recv":
				recvNode = &node
			case cn == "local.name", cn == "local.field":
				localNode, field = &node, cn == "local.field"
			case cn == "local.embed":
				// Go's embedded field: named by its type (gotypes_embed.go).
				localNode, typeNode, field, embed = &node, &node, true, true
			case cn == "local.type", cn == "local.guess", cn == "local.same":
				typeNode, guess = &node, cn != "local.type"
				if cn == "local.same" {
					sameNode = true
				}
			case cn == "local.elem", cn == "local.sameelem":
				// Go: the element type of a slice or map local, kept as the
				// local "s[]"; v of for _, v := range s takes it (gotypes_chain.go).
				typeNode, elem = &node, true
				if cn == "local.sameelem" {
					guess, sameNode = true, true
				}
			case cn == "local.pkg":
				pkgNode = &node
			case cn == "local.recv":
				recvExprNode = &node
			case cn == "package":
				f.Pkg = node.Utf8Text(src)
			case cn == "skip":
				// A namespace's or package's own path, a prototype's name:
				// no reference to anything.
				skips = append(skips, [2]uint32{offset(node.StartByte()), offset(node.EndByte())})
			case cn == "import.path":
				imp := Import{Path: unquote(node.Utf8Text(src))}
				for _, c2 := range m.Captures {
					if l.names[c2.Index] == "import.alias" {
						imp.Alias = c2.Node.Utf8Text(src)
					}
				}
				if imp.Alias == "" {
					imp.Alias = importName(imp.Path)
				}
				f.Imports = append(f.Imports, imp)
			case cn == "call", cn == "member", cn == "ref":
				at := offset(node.StartByte())
				r := refs[at]
				if r == nil {
					name := node.Utf8Text(src)
					if len(name) > 80 || l.stop[name] {
						continue
					}
					r = &rawRef{at: at, name: name}
					refs[at] = r
				}
				switch cn {
				case "call":
					r.flags |= refCall
				case "ref":
					r.plain = true
				}
				if cn != "ref" {
					recv := ""
					for _, c2 := range m.Captures {
						switch l.names[c2.Index] {
						case "qual.recv":
							recv = c2.Node.Utf8Text(src) + "."
						case "qual.lit":
							recv = c2.Node.Utf8Text(src) + "{}." // T{}.F().name (gotypes_assign.go)
						}
					}
					for _, c2 := range m.Captures {
						q := ""
						switch l.names[c2.Index] {
						case "qual":
							text := c2.Node.Utf8Text(src)
							q = qualifier(text)
							if l.name == "go" && q == text {
								r.flags |= refBare // V.name, not a.V.name (gotypes_assign.go)
							}
							if l.name == "php" {
								q = strings.TrimPrefix(q, "$") // $this->x, $store->get()
							}
						case "qual.call":
							q = recv + c2.Node.Utf8Text(src) + "()" // Go's x.F().name (gotypes_chain.go)
						case "qual.elem":
							q = qualifier(c2.Node.Utf8Text(src)) + "[]" // Go's s[i].name, m[k].name, a.s[i].name
						case "qual.type":
							q = c2.Node.Utf8Text(src) // Go's x.(T).name, T{}.name
						default:
							continue
						}
						if q != "" || r.qual == "" {
							r.qual = q // another pattern's "" does not undo a typed one
						}
						r.flags |= refMember
					}
				}
			}
		}
		if localNode != nil {
			loc := rawLocal{at: offset(localNode.StartByte()), name: localNode.Utf8Text(src), guess: guess, field: field}
			if typeNode != nil {
				loc.typ, loc.pkg, _ = typeName(typeNode.Utf8Text(src))
			}
			if pkgNode != nil {
				loc.pkg = pkgNode.Utf8Text(src)
			}
			if recvExprNode != nil {
				if loc.pkg = receiverExpr(recvExprNode.Utf8Text(src)); loc.pkg == "" {
					typeNode = nil // a receiver the graph cannot name: the local stays untyped
					loc.typ, loc.guess = "", false
				}
			}
			if guess && l.name == "go" {
				loc.nth = resultIndex(localNode)
			}
			if sameNode {
				loc.pkg = sameVar
			}
			if embed {
				loc.name = loc.typ
			}
			if elem && sameNode {
				loc.typ += "[]"
			} else if elem {
				loc.name += "[]"
				loc.at++ // beside the local of the slice itself, not in its place
			}
			newCall := l.name == "go" && loc.guess && loc.pkg == "" && loc.typ == "new" // x := new(T) has its own pattern
			if (typeNode == nil || loc.typ != "") && !newCall {
				locals = append(locals, loc)
			}
		}
		if defNode == nil || nameNode == nil {
			continue
		}
		d := rawDef{
			start:  offset(defNode.StartByte()),
			end:    offset(defNode.EndByte()),
			nameAt: offset(nameNode.StartByte()),
			name:   baseName(nameNode.Utf8Text(src)),
			kind:   kind,
		}
		if recvNode != nil {
			d.recv = baseName(recvNode.Utf8Text(src))
		}
		if !refine(l, &d, defNode, src) {
			dropped[d.nameAt] = true // a name, not a reference
			continue
		}
		d.sig = signature(l, &d, defNode, src)
		defs = append(defs, d)
	}
	for at := range dropped {
		delete(refs, at)
	}
	for _, sk := range skips {
		for at := range refs {
			if at >= sk[0] && at < sk[1] {
				delete(refs, at)
			}
		}
	}
	build(f, src, defs, refs, locals)
	return nil
}

// refine settles a definition's kind from its node; false drops it.
func refine(l *language, d *rawDef, n *ts.Node, src []byte) bool {
	switch l.name {
	case "go":
		if d.kind == "type" {
			if t := n.ChildByFieldName("type"); t != nil {
				switch t.Kind() {
				case "struct_type":
					d.kind = "struct"
				case "interface_type":
					d.kind = "interface"
				}
			}
		}
	case "python":
		if d.kind == "const" && strings.ToUpper(d.name) != d.name {
			return false
		}
	case "java":
		if d.kind == "field" {
			mods := ""
			if c := n.Child(0); c != nil && c.Kind() == "modifiers" {
				mods = c.Utf8Text(src)
			}
			if !strings.Contains(mods, "static") || !strings.Contains(mods, "final") {
				return false
			}
			d.kind = "const"
		}
	case "csharp":
		if d.kind == "field" {
			mods := ""
			for i := uint(0); i < n.ChildCount(); i++ {
				if c := n.Child(i); c != nil && c.Kind() == "modifier" {
					mods += " " + c.Utf8Text(src)
				}
			}
			if !strings.Contains(mods, "const") && (!strings.Contains(mods, "static") || !strings.Contains(mods, "readonly")) {
				return false
			}
			d.kind = "const"
		}
	case "c", "cpp":
		return refineC(d, n, src)
	case "ruby":
		refineRuby(d, n, src)
	case "kotlin":
		refineKotlin(d, n, src)
	}
	return d.name != ""
}

// refineC names a typedef of a record or enum by its kind and drops the
// record's own name inside it (typedef struct list {...} list_t is list_t).
func refineC(d *rawDef, n *ts.Node, src []byte) bool {
	switch d.kind {
	case "struct", "enum", "class":
		if p := n.Parent(); p != nil && p.Kind() == "type_definition" {
			return false
		}
	case "type":
		t := n.ChildByFieldName("type")
		if t == nil || t.ChildByFieldName("body") == nil {
			break
		}
		switch t.Kind() {
		case "struct_specifier", "union_specifier", "class_specifier":
			d.kind = "struct"
		case "enum_specifier":
			d.kind = "enum"
		}
	}
	return d.name != ""
}

// refineRuby puts a module's def self.name in that module, and calls any
// other method outside a class a function.
func refineRuby(d *rawDef, n *ts.Node, src []byte) {
	if d.kind != "method" {
		return
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "class", "singleton_class":
			return
		case "module":
			// def self.name is called as Module.name; a plain method of a
			// module is mixed into classes and called without it.
			if name := p.ChildByFieldName("name"); name != nil && n.Kind() == "singleton_method" {
				d.recv = baseName(name.Utf8Text(src))
			} else {
				d.kind = "func"
			}
			return
		}
	}
	d.kind = "func"
}

// refineKotlin tells an interface from a class (the grammar calls both
// class_declaration) and a constant from a top-level variable.
func refineKotlin(d *rawDef, n *ts.Node, src []byte) {
	switch d.kind {
	case "class":
		for i := uint(0); i < n.ChildCount(); i++ {
			if c := n.Child(i); c != nil && c.Kind() == "interface" {
				d.kind = "interface"
			}
		}
	case "const":
		if c := n.Child(0); c == nil || c.Kind() != "modifiers" || !strings.Contains(c.Utf8Text(src), "const") {
			d.kind = "var"
		}
	}
}

// signature is the declaration's text before its body, on one line.
func signature(l *language, d *rawDef, n *ts.Node, src []byte) string {
	start, end := n.StartByte(), n.EndByte()
	body := n.ChildByFieldName("body")
	if body == nil {
		if v := n.ChildByFieldName("value"); v != nil && (v.Kind() == "arrow_function" || v.Kind() == "function_expression") {
			body = v.ChildByFieldName("body")
		}
	}
	var text string
	if n.Kind() == "type_definition" {
		return typedefSignature(n, d.name, src)
	}
	if body != nil {
		text = string(src[start:body.StartByte()])
	} else {
		text = string(src[start:end])
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
	}
	text = strings.Join(strings.Fields(text), " ")
	text = strings.TrimRight(text, " {:;")
	text = strings.TrimSuffix(text, "=>")
	text = strings.TrimSpace(text)
	if l.name == "go" {
		switch d.kind {
		case "type", "struct", "interface":
			text = "type " + text
		case "const":
			text = "const " + text
		case "var":
			text = "var " + text
		}
	}
	const maxSig = 200
	if len(text) > maxSig {
		cut := maxSig
		for cut > 0 && !utf8Start(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// typedefSignature is a C typedef without the record's body:
// typedef struct list list_t.
func typedefSignature(n *ts.Node, name string, src []byte) string {
	t := n.ChildByFieldName("type")
	if t == nil {
		return "typedef " + name
	}
	end := t.EndByte()
	if b := t.ChildByFieldName("body"); b != nil {
		end = b.StartByte()
	}
	return strings.Join(strings.Fields("typedef "+string(src[t.StartByte():end])+" "+name), " ")
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// build orders the raw definitions, nests them, attaches every reference
// to its innermost enclosing definition, and keeps one per name there.
func build(f *File, src []byte, defs []rawDef, refs map[uint32]*rawRef, locals []rawLocal) {
	lines := lineStarts(src)
	sort.SliceStable(defs, func(i, j int) bool {
		if defs[i].start != defs[j].start {
			return defs[i].start < defs[j].start
		}
		return defs[i].end > defs[j].end
	})
	// One definition per name node; a function wins over the constant
	// that holds it (const f = () => ...).
	seen := map[uint32]int{}
	kept := defs[:0]
	for _, d := range defs {
		if k, ok := seen[d.nameAt]; ok {
			if kept[k].kind == "const" && d.kind != "const" {
				kept[k] = d
			}
			continue
		}
		seen[d.nameAt] = len(kept)
		kept = append(kept, d)
	}
	defs = kept

	var stack []int32
	f.Defs = make([]Def, len(defs))
	for i := range defs {
		d := &defs[i]
		for len(stack) > 0 && defs[stack[len(stack)-1]].end <= d.start {
			stack = stack[:len(stack)-1]
		}
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
		out := Def{Name: d.name, Kind: d.kind, Sig: d.sig, Parent: parent,
			Line: lineOf(lines, d.start), End: lineOf(lines, endAt(d.end, d.start))}
		if d.recv != "" {
			out.Container = d.recv
		} else if parent >= 0 {
			out.Container = f.container(parent)
		}
		if out.Kind == "func" && out.Container != "" {
			out.Kind = "method"
		}
		f.Defs[i] = out
	}

	// One local per name node, the typed one first; a definition's name
	// is no local (const f = () => ... stays a function).
	sort.SliceStable(locals, func(i, j int) bool {
		if locals[i].at != locals[j].at {
			return locals[i].at < locals[j].at
		}
		return locals[i].typ != "" && locals[j].typ == ""
	})
	f.Locals, f.Fields = nil, nil
	for i, l := range locals {
		if _, isDef := seen[l.at]; isDef || (i > 0 && locals[i-1].at == l.at) {
			continue
		}
		di := innermostAt(defs, l.at)
		if l.field {
			fn := di
			for di >= 0 && !classLike(f.Defs[di].Kind) {
				di = f.Defs[di].Parent
			}
			if di < 0 && f.Lang == "go" && fn >= 0 {
				di = fn // a field of an anonymous struct in a function (gotypes_assign.go)
			}
			if di < 0 {
				continue
			}
		}
		loc := Local{Def: di, Name: l.name, Type: l.typ, Pkg: l.pkg, Guess: l.guess, Nth: l.nth}
		if l.field && l.typ != "" {
			f.Fields = append(f.Fields, loc)
		} else if !l.field {
			f.Locals = append(f.Locals, loc)
		}
	}
	sort.SliceStable(f.Locals, func(i, j int) bool { return f.Locals[i].Name < f.Locals[j].Name })
	sort.SliceStable(f.Fields, func(i, j int) bool { return f.Fields[i].Name < f.Fields[j].Name })

	// References, in source order so the enclosing definition is a sweep.
	ats := make([]uint32, 0, len(refs))
	for at, r := range refs {
		if _, isDef := seen[at]; isDef {
			continue
		}
		if r.flags == 0 && !r.plain {
			continue
		}
		ats = append(ats, at)
	}
	sort.Slice(ats, func(i, j int) bool { return ats[i] < ats[j] })
	type key struct {
		def        int32
		name, qual string // qual: Go keeps a.Close() and b.Close() apart (gotypes_*.go type each receiver)
	}
	merged := map[key]*rawRef{}
	var order []key
	defAt := make([]int32, len(ats))
	stack = stack[:0]
	next := 0
	for i, at := range ats {
		for next < len(defs) && defs[next].start <= at {
			for len(stack) > 0 && defs[stack[len(stack)-1]].end <= defs[next].start {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, int32(next))
			next++
		}
		for len(stack) > 0 && defs[stack[len(stack)-1]].end <= at {
			stack = stack[:len(stack)-1]
		}
		di := int32(-1)
		if len(stack) > 0 {
			di = stack[len(stack)-1]
		}
		defAt[i] = di
		r := refs[at]
		k := key{def: di, name: r.name}
		if f.Lang == "go" {
			k.qual = r.qual
		}
		if m, ok := merged[k]; ok {
			m.flags |= r.flags
			if m.qual == "" {
				m.qual = r.qual
			}
			continue
		}
		merged[k] = r
		order = append(order, k)
	}

	names := map[string]int32{}
	for _, k := range order {
		names[k.name] = 0
		if q := merged[k].qual; q != "" {
			names[q] = 0
		}
	}
	f.Names = make([]string, 0, len(names))
	for n := range names {
		f.Names = append(f.Names, n)
	}
	sort.Strings(f.Names)
	for i, n := range f.Names {
		names[n] = int32(i)
	}
	f.Refs = make([]Ref, 0, len(order))
	for _, k := range order {
		r := merged[k]
		q := int32(-1)
		if r.qual != "" {
			q = names[r.qual]
		}
		f.Refs = append(f.Refs, Ref{Name: names[k.name], Qual: q, Line: lineOf(lines, r.at), Def: k.def, Flags: r.flags})
	}
	sort.SliceStable(f.Refs, func(i, j int) bool { return f.Refs[i].Name < f.Refs[j].Name })
}

func endAt(end, start uint32) uint32 {
	if end > start {
		return end - 1
	}
	return end
}

func lineStarts(src []byte) []uint32 {
	starts := []uint32{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, uint32(i+1))
		}
	}
	return starts
}

// offset is a node's byte offset as the graph keeps it. parse takes at
// most maxParseBytes, so it never reaches the bound.
func offset(at uint) uint32 {
	if at > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(at)
}

// lineOf is the 1-based line holding byte at. Callers take sources of
// fewer than math.MaxInt32 bytes, so it never reaches the bound.
func lineOf(starts []uint32, at uint32) int32 {
	line := sort.Search(len(starts), func(i int) bool { return starts[i] > at })
	if line < 0 || line > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(line)
}

// baseName keeps a declared type's bare name: *T, T[K], a::b::T<U> → T.
func baseName(s string) string {
	s = strings.TrimLeft(s, "*&")
	for _, cut := range []string{"[", "<", "("} {
		if i := strings.Index(s, cut); i > 0 {
			s = s[:i]
		}
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// qualifier keeps the last simple part of a qualifier expression
// (a.b.c → c, a::b → b); a call or anything complex gives "".
func qualifier(s string) string {
	if len(s) > 80 || strings.ContainsAny(s, "()[]{}\n\"'") {
		return ""
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.LastIndex(s, "->"); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, "\"`")
}

// innermostAt is the index of the innermost definition holding byte at.
func innermostAt(defs []rawDef, at uint32) int32 {
	best := int32(-1)
	for i := range defs {
		if defs[i].start > at {
			break
		}
		if at < defs[i].end {
			best = int32(i)
		}
	}
	return best
}

// typeName reduces a type as written to the name its methods are declared
// on: *pkg.Store[K] is Store of pkg, &mut Queue<T> is Queue. A slice, map,
// function or unnamed type gives ok false.
func typeName(s string) (name, pkg string, ok bool) {
	s = strings.TrimSpace(s)
	for {
		t := strings.TrimLeft(s, "*&")
		t = strings.TrimPrefix(t, "mut ")
		t = strings.TrimSpace(t)
		if t == s {
			break
		}
		s = t
	}
	if s == "" || strings.ContainsAny(s[:1], "[({'\"") || s == "var" || strings.HasPrefix(s, "map[") ||
		strings.HasPrefix(s, "func") || strings.HasPrefix(s, "chan ") || strings.HasPrefix(s, "dyn ") || strings.HasPrefix(s, "impl ") {
		return "", "", false
	}
	if i := strings.IndexAny(s, "[<( |"); i > 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		pkg, s = s[:i], s[i+2:]
	} else if i := strings.LastIndex(s, "."); i >= 0 {
		pkg, s = s[:i], s[i+1:]
	}
	if s == "" {
		return "", "", false
	}
	return s, pkg, true
}
