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
