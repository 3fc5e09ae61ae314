package codegraph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every refused argument gets one ERROR line naming its field, and a
// refused call stores nothing.
func TestBadInputNamesTheField(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	type q = func(context.Context, *Env, json.RawMessage) Result
	cases := []struct {
		name string
		q    q
		args string
		want string
	}{
		{"outline no path", Outline, `{}`, "ERROR: path: is required"},
		{"outline missing file", Outline, `{"path":"nope.go"}`, "ERROR: path: nope.go does not exist"},
		{"outline outside home", Outline, `{"path":"/etc/passwd"}`, "ERROR: path: /etc/passwd is outside /home/agent"},
		{"outline escape", Outline, `{"path":"../../../etc/passwd"}`, "ERROR: path:"},
		{"outline folder", Outline, `{"path":"gosrc"}`, "ERROR: path: gosrc is a folder"},
		{"outline not in a repo", Outline, `{"path":"/home/agent/notes.txt"}`, "ERROR: path: /home/agent/notes.txt is not inside a repository"},
		{"outline wrong type", Outline, `{"path":3}`, "ERROR: path: must be a string"},
		{"find no question", Find, `{}`, "ERROR: question: is required"},
		{"find only stop words", Find, `{"question":"where is the"}`, "ERROR: question:"},
		{"find limit high", Find, `{"question":"store","limit":50}`, "ERROR: limit: must be between 1 and 20"},
		{"find limit negative", Find, `{"question":"store","limit":-1}`, "ERROR: limit:"},
		{"find limit type", Find, `{"question":"store","limit":"many"}`, "ERROR: limit: must be a number, not string"},
		{"find in missing", Find, `{"question":"store","in":"nowhere"}`, "ERROR: in: nowhere does not exist"},
		{"callers no symbol", Callers, `{}`, "ERROR: symbol: is required"},
		{"callers direction", Callers, `{"symbol":"x","direction":"sideways"}`, "ERROR: direction: must be in or out"},
		{"callers depth", Callers, `{"symbol":"x","depth":7}`, "ERROR: depth: must be 1, 2 or 3"},
		{"map unknown repo", Map, `{"repo":"nope"}`, `ERROR: repo: no repository "nope" under /home/agent/repos (there: poly)`},
		{"map repo path", Map, `{"repo":"../poly"}`, "ERROR: repo:"},
		{"symbols no pattern", Symbols, `{}`, "ERROR: pattern: is required"},
		{"symbols bad pattern", Symbols, `{"pattern":"(unclosed"}`, "ERROR: pattern: does not parse"},
		{"symbols bad glob", Symbols, `{"pattern":"x","glob":"{a,b"}`, "ERROR: glob:"},
		{"symbols path outside", Symbols, `{"pattern":"x","path":"/tmp"}`, "ERROR: path:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.q(context.Background(), env, json.RawMessage(c.args))
			if !strings.HasPrefix(r.Text, c.want) || strings.Count(r.Text, "\n") > 0 {
				t.Fatalf("got %q, want one line starting %q", r.Text, c.want)
			}
		})
	}
	if _, err := os.Stat(env.cacheDir("poly")); err == nil {
		entries, _ := os.ReadDir(env.cacheDir("poly"))
		for _, e := range entries {
			if e.Name() == storeName {
				t.Fatal("a refused call built the graph")
			}
		}
	}
}

// A file in a language the graph does not parse is named as such by every
// graph tool narrowed to it (one line, no hits, not an empty answer), and
// text search still finds it.
func TestUnknownLanguage(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	if err := os.WriteFile(filepath.Join(home, "repos/poly/data.xyz"), []byte("Store keeps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const parses = "(it parses Go, Python, JavaScript, TypeScript (.ts, .tsx), Rust, Java, C, C++, C#, Ruby, PHP, Kotlin and Bash); code_search finds text in it"
	for _, c := range []struct {
		name string
		r    Result
		want string
	}{
		{"outline", call(t, Outline, env, OutlineArgs{Path: "README.md"}), "README.md: the code graph does not parse .md files " + parses},
		{"outline xyz", call(t, Outline, env, OutlineArgs{Path: "data.xyz"}), "data.xyz: the code graph does not parse .xyz files " + parses},
		{"find in", call(t, Find, env, FindArgs{Question: "store", In: "data.xyz"}), "data.xyz: the code graph does not parse .xyz files " + parses},
		{"callers in", call(t, Callers, env, CallersArgs{Symbol: "Store", In: "README.md"}), "README.md: the code graph does not parse .md files " + parses},
	} {
		if !strings.HasPrefix(c.r.Text, c.want) || strings.Contains(c.r.Text, "\n") || c.r.Meta["hits"] != 0 {
			t.Errorf("%s: %q %v\nwant one line starting %q and no hits", c.name, c.r.Text, c.r.Meta, c.want)
		}
	}
	r := call(t, Symbols, env, SymbolsArgs{Pattern: "Store keeps"})
	if !strings.Contains(r.Text, "README.md (not in the graph)") || !strings.Contains(r.Text, "3: A fixture") {
		t.Fatalf("symbols search in README.md:\n%s", r.Text)
	}
}

// The repository comes from the argument, else the working directory,
// else the only one there; with several and none named, the error says
// which field picks one.
func TestRepositoryAddressing(t *testing.T) {
	env, home := newHome(t, "", "poly")
	if r := call(t, Find, env, FindArgs{Question: "slugify"}); r.Meta["repository"] != "poly" {
		t.Fatalf("the only repository: %q %v", r.Text, r.Meta)
	}
	copyTree(t, "testdata/repos/poly", filepath.Join(home, "repos", "other"))
	r := call(t, Find, env, FindArgs{Question: "slugify"})
	if !strings.HasPrefix(r.Text, "ERROR: in: the working directory is in no repository and /home/agent/repos holds several (other, poly)") {
		t.Fatalf("two repositories: %q", r.Text)
	}
	r = call(t, Outline, env, OutlineArgs{Path: "repos/other/web/util.js"})
	if r.Meta["repository"] != "other" || !strings.HasPrefix(r.Text, "repos/other/web/util.js · javascript") {
		t.Fatalf("by path: %q %v", r.Text, r.Meta)
	}
	env.Cwd = filepath.Join(home, "repos", "other", "web")
	r = call(t, Callers, env, CallersArgs{Symbol: "slugify"})
	if r.Meta["repository"] != "other" || !strings.Contains(r.Text, "← Router.add  util.js:13") {
		t.Fatalf("by working directory: %q %v", r.Text, r.Meta)
	}
	if r := call(t, Map, env, MapArgs{}); r.Meta["repository"] != "other" {
		t.Fatalf("map without repo from the working directory: %q", r.Text)
	}
	if r := call(t, Map, env, MapArgs{Repo: "poly"}); !strings.HasPrefix(r.Text, "repository poly (/home/agent/repos/poly)") {
		t.Fatalf("map of another repository names it from home: %q", r.Text)
	}
}

// A result past MaxBytes stops at a line and says how many it left out.
func TestResultCap(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	env.MaxBytes = 400
	r := call(t, Map, env, MapArgs{Repo: "poly"})
	if len(r.Text) > 400 || !strings.Contains(r.Text, "more lines left out") {
		t.Fatalf("%d bytes:\n%s", len(r.Text), r.Text)
	}
}
