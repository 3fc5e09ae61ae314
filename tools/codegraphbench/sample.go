package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
)

// Strata the definitions are sampled across.
var strata = []string{"func", "method", "common", "interface", "generic"}

// commonNames are method names many types share.
var commonNames = map[string]bool{"String": true, "Error": true, "Close": true, "Read": true, "Write": true,
	"Get": true, "Set": true, "Len": true, "Reset": true, "Next": true, "Scan": true, "Value": true,
	"Do": true, "Run": true, "Start": true, "Stop": true, "Add": true, "Name": true, "Type": true, "Encode": true,
	"Decode": true, "Err": true, "Exec": true, "Query": true}

// target is one sampled definition.
type target struct {
	stratum string
	rel     string // file, relative to the module's root
	pkg     string // package clause
	recv    string // receiver or interface type, "" for a function
	name    string
	line    int // 1-based line of the name
	col     int // 0-based column of the name
}

// symbol is how code_callers and code_find are asked for it.
func (t target) symbol() string {
	if t.recv != "" {
		return t.recv + "." + t.name
	}
	return t.pkg + "." + t.name
}

// fileIndex maps a line of a file to the top-level declaration holding
// it, the unit callers are compared in.
type fileIndex struct {
	decls []declSpan
}

type declSpan struct {
	start, end int
	name       string
}

func (fi fileIndex) at(line int) string {
	for _, d := range fi.decls {
		if d.start <= line && line <= d.end {
			return d.name
		}
	}
	return "(top level)"
}

// scan parses every Go file of a module: the candidates of each stratum
// (from files other than tests) and the index of every file.
func scan(root string) (map[string][]target, map[string]fileIndex, error) {
	cands := map[string][]target{}
	index := map[string]fileIndex{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // a file the module's build never sees
		}
		var fi fileIndex
		for _, decl := range f.Decls {
			start, end := fset.Position(decl.Pos()).Line, fset.Position(decl.End()).Line
			name := "(top level)"
			if fd, ok := decl.(*ast.FuncDecl); ok {
				name = fd.Name.Name
				if r := recvName(fd); r != "" {
					name = r + "." + name
				}
			}
			fi.decls = append(fi.decls, declSpan{start, end, name})
		}
		index[rel] = fi
		if strings.HasSuffix(rel, "_test.go") || f.Name.Name == "main" {
			return nil
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(p), filepath.Base(p)); err != nil || !ok {
			return nil // left out of this platform's build (gopls does not load it)
		}
		add := func(stratum, recv string, id *ast.Ident) {
			if id.Name == "_" || id.Name == "init" {
				return
			}
			pos := fset.Position(id.Pos())
			cands[stratum] = append(cands[stratum], target{stratum: stratum, rel: rel, pkg: f.Name.Name, recv: recv,
				name: id.Name, line: pos.Line, col: pos.Column - 1})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				recv := recvName(d)
				switch {
				case d.Type.TypeParams != nil || genericRecv(d):
					add("generic", recv, d.Name)
				case recv == "":
					add("func", "", d.Name)
				case commonNames[d.Name.Name]:
					add("common", recv, d.Name)
				default:
					add("method", recv, d.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					it, ok := ts.Type.(*ast.InterfaceType)
					if !ok || ts.TypeParams != nil {
						continue
					}
					for _, m := range it.Methods.List {
						if _, ok := m.Type.(*ast.FuncType); ok && len(m.Names) == 1 {
							add("interface", ts.Name.Name, m.Names[0])
						}
					}
				}
			}
		}
		return nil
	})
	return cands, index, err
}

func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func genericRecv(fd *ast.FuncDecl) bool {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return false
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch t.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

// sample draws up to per definitions of each stratum with a fixed seed.
func sample(cands map[string][]target, per int, seed uint64) []target {
	r := rand.New(rand.NewPCG(seed, 37)) //nolint:gosec // G404: a reproducible sample, not a secret
	var out []target
	for _, s := range strata {
		c := cands[s]
		sort.Slice(c, func(i, j int) bool {
			if c[i].rel != c[j].rel {
				return c[i].rel < c[j].rel
			}
			return c[i].line < c[j].line
		})
		r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		out = append(out, c[:min(per, len(c))]...)
	}
	return out
}
