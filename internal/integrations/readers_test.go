package integrations_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/integrations"
)

// No module reads an integration's variable from the environment itself:
// every Getenv, getenv or LookupEnv call outside this package is checked for
// a catalog variable, named as a literal or as a constant that holds one.
// Modules ask the registry (Value, On) instead.
func TestOnlyTheRegistryReadsTheBoxsVariables(t *testing.T) {
	vars := map[string]bool{}
	for _, in := range integrations.Catalog {
		for _, v := range append(append([]string(nil), in.Required...), in.Tuning...) {
			vars[v] = true
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(rel, filepath.Join("internal", "integrations")+string(filepath.Separator)) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Constants that hold a variable's name (google.EnvClientID…).
	consts := map[string]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, v := range vs.Values {
				if s, ok := stringLit(v); ok && vars[s] && i < len(vs.Names) {
					consts[vs.Names[i].Name] = s
				}
			}
			return true
		})
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 || !envReader(call.Fun) {
				return true
			}
			name, ok := stringLit(call.Args[0])
			if !ok {
				switch a := call.Args[0].(type) {
				case *ast.Ident:
					name = consts[a.Name]
				case *ast.SelectorExpr:
					name = consts[a.Sel.Name]
				}
			}
			if vars[name] {
				t.Errorf("%s reads %s from the environment; ask the integrations registry", fset.Position(call.Pos()), name)
			}
			return true
		})
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// envReader reports whether a call reads one environment variable.
func envReader(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	switch name {
	case "Getenv", "getenv", "LookupEnv":
		return true
	}
	return false
}
