package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sqlText is what a statement written in Go looks like.
var sqlText = regexp.MustCompile(`(?is)\b(select\s.+?\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from)\b`)

// Handlers call domain functions only: no statement is written in api/, and
// no database method is called there, so each table has one owner.
func TestNoSQLInAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if v, err := strconv.Unquote(n.Value); err == nil && sqlText.MatchString(v) {
						t.Errorf("%s: SQL in api/: move it behind a function of the package that owns the table", fset.Position(n.Pos()))
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch sel.Sel.Name {
				case "Exec", "QueryRow", "SendBatch", "CopyFrom":
					t.Errorf("%s: %s called in api/: call a domain function instead", fset.Position(n.Pos()), sel.Sel.Name)
				case "Query":
					// c.Query(name) reads a query parameter; a database query takes SQL and arguments.
					if len(n.Args) > 1 {
						t.Errorf("%s: Query called in api/: call a domain function instead", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
}
