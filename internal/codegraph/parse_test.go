package codegraph

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// dumpFile lists a parsed file's definitions and references as text.
func dumpFile(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %s (%s)", f.Path, f.Lang)
	if f.Pkg != "" {
		fmt.Fprintf(&b, " package %s", f.Pkg)
	}
	b.WriteString("\n")
	for _, im := range f.Imports {
		fmt.Fprintf(&b, "import %s %s\n", im.Alias, im.Path)
	}
	for _, d := range f.Defs {
		parent := ""
		if d.Parent >= 0 {
			parent = " in " + f.Defs[d.Parent].Name
		}
		fmt.Fprintf(&b, "def %s %s %d-%d%s | %s\n", d.Kind, d.QualName(), d.Line, d.End, parent, d.Sig)
	}
	f.refs()
	for _, l := range append(append([]Local{}, f.Locals...), f.Fields...) {
		at := "top"
		if l.Def >= 0 {
			at = f.Defs[l.Def].QualName()
		}
		guess := ""
		if l.Guess {
			guess = " (guess)"
		}
		if l.Nth > 0 {
			guess += fmt.Sprintf(" (result %d)", l.Nth+1)
		}
		q := ""
		if l.Pkg != "" {
			q = l.Pkg + "."
		}
		fmt.Fprintf(&b, "local %s %s%s in %s%s\n", l.Name, q, l.Type, at, guess)
	}
	for _, r := range f.refs() {
		at := "top"
		if r.Def >= 0 {
			at = f.Defs[r.Def].QualName()
		}
		var flags []string
		if r.Flags&refCall != 0 {
			flags = append(flags, "call")
		}
		if r.Flags&refMember != 0 {
			flags = append(flags, "member")
		}
		q := ""
		if r.Qual >= 0 {
			q = f.Names[r.Qual] + "."
		}
		fmt.Fprintf(&b, "ref %s%s :%d in %s %s\n", q, f.Names[r.Name], r.Line, at, strings.Join(flags, ","))
	}
	return b.String()
}

func parseFixture(t *testing.T, rel string) *File {
	t.Helper()
	return parseFixtureIn(t, "poly", rel)
}

// parseFixtureIn parses rel of the fixture repository repo.
func parseFixtureIn(t *testing.T, repo, rel string) *File {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata/repos", repo, rel))
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Path: rel, Lang: languageOf(rel)}
	p := newParser()
	defer p.close()
	if err := p.parse(f, src); err != nil {
		t.Fatal(err)
	}
	return f
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata/golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// Every language's definitions, spans, signatures and references.
func TestParseGolden(t *testing.T) {
	for _, rel := range []string{
		"gosrc/store/store.go", "gosrc/main.go", "gosrc/server.go", "py/shapes.py", "py/main.py", "web/util.js",
		"web/api.ts", "web/view.tsx", "rs/lib.rs", "java/com/acme/Greeter.java",
	} {
		t.Run(rel, func(t *testing.T) {
			golden(t, "parse/"+strings.ReplaceAll(rel, "/", "_")+".txt", dumpFile(parseFixture(t, rel)))
		})
	}
}

// parse takes at most maxParseBytes, the bound under which every byte
// offset and line the graph keeps fits: a file that grew past it after
// its stat is refused, not parsed with offsets cut short.
func TestParseRefusesMoreThanTheCap(t *testing.T) {
	p := newParser()
	defer p.close()
	line := "func f() {}\n"
	src := []byte("package big\n" + strings.Repeat(line, maxParseBytes/len(line)+1))
	f := &File{Path: "big.go", Lang: "go"}
	err := p.parse(f, src)
	if err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Fatalf("err = %v, want the source refused as too large", err)
	}
	if err := p.parse(&File{Path: "small.go", Lang: "go"}, src[:1000]); err != nil {
		t.Fatalf("a small source: %v", err)
	}
}
