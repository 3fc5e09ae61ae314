package codegraph

import (
	"strings"
	"testing"
)

// The fixture repository langs holds one small project per language added
// after the first seven: C, C++, C#, Ruby, PHP, Kotlin and Bash.
var langFixtures = []string{
	"c/list.c", "c/main.c", "cpp/shapes.hpp", "cpp/shapes.cpp", "cs/Greeter.cs",
	"rb/shapes.rb", "php/store.php", "kt/Greeter.kt", "sh/build.sh",
}

// Each language's definitions, spans, signatures and references.
func TestParseGoldenMoreLanguages(t *testing.T) {
	for _, rel := range langFixtures {
		t.Run(rel, func(t *testing.T) {
			f := parseFixtureIn(t, "langs", rel)
			if f.Lang == "" || len(f.Defs) == 0 {
				t.Fatalf("%s: language %q, %d definitions; want it parsed", rel, f.Lang, len(f.Defs))
			}
			golden(t, "parse/langs_"+strings.ReplaceAll(rel, "/", "_")+".txt", dumpFile(f))
		})
	}
}

// A reference resolved in each language: by name in the file or folder,
// through a declared or constructed type, through a module or namespace,
// and to the enclosing class for an unqualified method.
func TestCallEdgesMoreLanguages(t *testing.T) {
	env, _ := newHome(t, "repos/langs", "langs")
	cases := []struct {
		symbol, direction string
		want, not         []string
	}{
		{"list_push", "in", []string{"← main  c/main.c:6"}, nil},
		{"node_new", "in", []string{"← list_push  c/list.c:28"}, nil},
		{"total_area", "in", []string{"← main  cpp/shapes.cpp:26"}, []string{"shapes.hpp:21"}},
		{"Shape.describe", "out", []string{"→ Shape.area  cpp/shapes.hpp:8"}, nil},
		{"Formatter.Format", "in", []string{"← Greeter.Greet  cs/Greeter.cs:17"}, nil},
		{"Greeter.Greet", "in", []string{"← Program.Main  cs/Greeter.cs:33"}, []string{"IGreeter.Greet  cs/Greeter.cs:7  (1"}},
		{"Geo.total_area", "in", []string{"← (top level of shapes.rb)  rb/shapes.rb:33"}, nil},
		{"Shape.area", "in", []string{"← Shape.describe  rb/shapes.rb:10"}, nil},
		{"Circle.unit", "in", []string{"← (top level of shapes.rb)  rb/shapes.rb:33"}, nil},
		{"Store.put", "in", []string{"← main  php/store.php:35"}, nil},
		{"Store.get", "in", []string{"← main  php/store.php:36"}, []string{"Getter.get  php/store.php:9  (1"}},
		{"normalize", "in", []string{"← Store.put  php/store.php:23"}, nil},
		{"Formatter.format", "in", []string{"← Greeter.greet  kt/Greeter.kt:11"}, nil},
		{"Greeter.greet", "in", []string{"← main  kt/Greeter.kt:25"}, nil},
		{"log", "in", []string{"← compile  sh/build.sh:11", "← main  sh/build.sh:17"}, nil},
	}
	for _, c := range cases {
		t.Run(c.symbol+" "+c.direction, func(t *testing.T) {
			r := call(t, Callers, env, CallersArgs{Symbol: c.symbol, Direction: c.direction})
			for _, w := range c.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("missing %q in\n%s", w, r.Text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.Text, n) {
					t.Errorf("unexpected %q in\n%s", n, r.Text)
				}
			}
		})
	}
}

// Outlines and code_find answer for the new languages as for the others.
func TestOutlineAndFindMoreLanguages(t *testing.T) {
	env, _ := newHome(t, "repos/langs", "langs")
	for rel, want := range map[string]string{
		"c/list.c":       "11-14  typedef struct list list_t",
		"cpp/shapes.hpp": "    double area() const override",
		"cs/Greeter.cs":  "public string Greet(string name)",
		"rb/shapes.rb":   "def self.total_area(shapes)",
		"php/store.php":  "public function put(string $key, string $value): void",
		"kt/Greeter.kt":  "interface Greeting",
		"sh/build.sh":    "function compile",
	} {
		r := call(t, Outline, env, OutlineArgs{Path: rel})
		if !strings.Contains(r.Text, want) || r.Meta["hits"].(int) == 0 {
			t.Errorf("outline of %s lacks %q:\n%s", rel, want, r.Text)
		}
	}
	r := call(t, Find, env, FindArgs{Question: "push onto the list"})
	if !strings.Contains(r.Text, "list_push") {
		t.Errorf("find push onto the list:\n%s", r.Text)
	}
}
