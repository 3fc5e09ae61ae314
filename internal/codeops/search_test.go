package codeops

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/codeproto"
)

// searchRepo is a small repository under /home/agent/repos/app with the
// working directory at its root.
func searchRepo(t *testing.T) *Env {
	t.Helper()
	env := testEnv(t)
	writeTestFile(t, env, "repos/app/.gitignore", "build/\n*.log\n")
	writeTestFile(t, env, "repos/app/main.go", "package main\n\n// Open opens.\nfunc Open() {}\n\nfunc main() {\n\tOpen()\n\tOpen()\n}\n")
	writeTestFile(t, env, "repos/app/store/store.go", "package store\n\nfunc Open() error { return nil }\n")
	writeTestFile(t, env, "repos/app/README.md", "Call open() or OPEN.\n")
	writeTestFile(t, env, "repos/app/build/gen.go", "package build\nfunc Open() {}\n")
	writeTestFile(t, env, "repos/app/debug.log", "Open Open Open Open\n")
	writeTestFile(t, env, "repos/app/wide.txt", "Open "+strings.Repeat("w", 400)+"\n")
	writeTestFile(t, env, "notes.txt", "Open the notes\n")
	must(t, env.SetCwd(filepath.Join(env.Home, "repos/app")))
	return env
}

func TestCodeSearchFiles(t *testing.T) {
	env := searchRepo(t)
	for _, tc := range []struct{ args, want string }{
		{`{"pattern":"Open"}`, "main.go: 4\nstore/store.go: 1\nwide.txt: 1\n6 matches in 3 files"},
		{`{"pattern":"open","ignore_case":true,"glob":"*.md"}`, "README.md: 2\n2 matches in 1 file"},
		{`{"pattern":"open()","fixed":true}`, "README.md: 1\n1 match in 1 file"},
		{`{"pattern":"Open","path":"store"}`, "store/store.go: 1\n1 match in 1 file"},
		{`{"pattern":"Open","path":"/home/agent/notes.txt"}`, "/home/agent/notes.txt: 1\n1 match in 1 file"},
		{`{"pattern":"Nothing"}`, `no matches for "Nothing" in /home/agent/repos/app`},
		{`{"pattern":"(unclosed"}`, "ERROR: pattern: regex parse error:"},
		{`{"pattern":"x","glob":"{a"}`, "ERROR: glob: "},
		{`{"pattern":""}`, "ERROR: pattern: is empty"},
		{`{"pattern":"x","mode":"lines"}`, `ERROR: mode: "lines" is not a mode (files, content or symbols)`},
		{`{"pattern":"x","context":6,"mode":"content"}`, "ERROR: context: 6 is out of range (0 to 5)"},
		{`{"pattern":"x","path":"nope"}`, "ERROR: path: nope does not exist"},
		{`{"pattern":"x","path":"/etc"}`, "ERROR: path: /etc is outside /home/agent"},
		{`{"pattern":"x","mode":"symbols"}`, "ERROR: symbol search is not available in this sandbox"},
	} {
		res := call(t, env, CodeSearch2, tc.args)
		isPrefix := strings.HasPrefix(tc.want, "ERROR") && strings.HasPrefix(res.Text, tc.want)
		if res.Text != tc.want && !isPrefix {
			t.Errorf("%s:\n%s\nwant\n%s", tc.args, res.Text, tc.want)
		}
	}
	res := call(t, env, CodeSearch2, `{"pattern":"Open"}`)
	if res.Meta["matches"] != 6 || res.Meta["files"] != 3 {
		t.Fatalf("meta %v", res.Meta)
	}
}

func TestSearchFromAWorkingDirectoryOutsideHome(t *testing.T) {
	env := searchRepo(t)
	outside := t.TempDir()
	call(t, env, Shell, shellArgs("cd "+outside))
	for _, f := range []func(t testing.TB, env *Env) codeproto.Response{
		func(t testing.TB, env *Env) codeproto.Response { return call(t, env, CodeSearch2, `{"pattern":"x"}`) },
		func(t testing.TB, env *Env) codeproto.Response { return call(t, env, CodeMatch, `{"pattern":"x"}`) },
		func(t testing.TB, env *Env) codeproto.Response { return call(t, env, FileRead, `{"path":"a.txt"}`) },
	} {
		if res := f(t, env); !strings.HasPrefix(res.Text, "ERROR: path: ") || !strings.Contains(res.Text, "outside /home/agent") {
			t.Errorf("%q", res.Text)
		}
	}
	// An absolute path under the home still works from there.
	if res := call(t, env, CodeSearch2, `{"pattern":"Open","path":"/home/agent/repos/app/store"}`); res.Text != "/home/agent/repos/app/store/store.go: 1\n1 match in 1 file" {
		t.Errorf("%q", res.Text)
	}
}

func TestCodeSearchSymbolsGoesToTheGraph(t *testing.T) {
	env := searchRepo(t)
	var got string
	symbols := func(_ context.Context, _ *Env, args json.RawMessage) codeproto.Response {
		got = string(args)
		return codeproto.Response{Text: "groups"}
	}
	res := CodeSearch(context.Background(), env, json.RawMessage(`{"pattern":"Open","mode":"symbols"}`), symbols)
	if res.Text != "groups" || got != `{"pattern":"Open","mode":"symbols"}` {
		t.Fatalf("%q %q", res.Text, got)
	}
}

func TestCodeSearchFilesAtMostThirty(t *testing.T) {
	env := testEnv(t)
	for i := 1; i <= 35; i++ {
		writeTestFile(t, env, fmt.Sprintf("d/f%02d.txt", i), strings.Repeat("hit\n", i))
	}
	res := call(t, env, CodeSearch2, `{"pattern":"hit"}`)
	lines := strings.Split(res.Text, "\n")
	if len(lines) != 31 || lines[0] != "d/f35.txt: 35" || lines[29] != "d/f06.txt: 6" ||
		lines[30] != "630 matches in 35 files (showing the 30 with the most; narrow with path or glob, or use mode content)" {
		t.Fatalf("%s", res.Text)
	}
	if res := call(t, env, CodeSearch2, `{"pattern":"hit","limit":2}`); !strings.HasPrefix(res.Text, "d/f35.txt: 35\nd/f34.txt: 34\n630 matches") {
		t.Fatalf("%s", res.Text)
	}
}

func TestCodeSearchContentGolden(t *testing.T) {
	env := searchRepo(t)
	res := call(t, env, CodeSearch2, `{"pattern":"Open","mode":"content","context":1}`)
	if res.Meta["matches"] != 6 || res.Meta["files"] != 3 {
		t.Fatalf("meta %v", res.Meta)
	}
	golden(t, "search_content.golden", res.Text)
	res = call(t, env, CodeSearch2, `{"pattern":"Open","mode":"content"}`)
	want := "main.go:3: // Open opens.\nmain.go:4: func Open() {}\nmain.go:7: \tOpen()\nmain.go:8: \tOpen()\n" +
		"store/store.go:3: func Open() error { return nil }\nwide.txt:1: Open " + strings.Repeat("w", 295) + " … [105 more characters]\n" +
		"6 matches in 3 files"
	if res.Text != want {
		t.Fatalf("%q", res.Text)
	}
}

func TestCodeSearchContentLimits(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, env, "a-many.txt", strings.Repeat("hit\n", 25))
	for i := 1; i <= 6; i++ {
		writeTestFile(t, env, fmt.Sprintf("f%d.txt", i), strings.Repeat("hit\n", 10))
	}
	res := call(t, env, CodeSearch2, `{"pattern":"hit","mode":"content"}`)
	lines := strings.Split(res.Text, "\n")
	perFile := map[string]int{}
	for _, l := range lines[:len(lines)-1] {
		p, _, _ := strings.Cut(l, ":")
		perFile[p]++
	}
	if len(lines) != 41 || perFile["a-many.txt"] != 10 || perFile["f3.txt"] != 10 || perFile["f4.txt"] != 0 {
		t.Fatalf("%d lines %v\n%s", len(lines), perFile, res.Text)
	}
	if last := lines[40]; last != "85 matches in 7 files (45 matching lines not shown: at most 40 lines, 10 matches per file; narrow with path or glob)" {
		t.Fatalf("%q", last)
	}
}

func TestCodeSearchStopsAtTheCap(t *testing.T) {
	env := testEnv(t)
	env.Req.MaxBytes = 600
	writeTestFile(t, env, "a.txt", strings.Repeat("hit "+strings.Repeat("z", 100)+"\n", 10))
	res := call(t, env, CodeSearch2, `{"pattern":"hit","mode":"content"}`)
	if len(res.Text) > 600 || !strings.Contains(res.Text, "[stopped at the 600 byte cap: ") ||
		!strings.HasSuffix(res.Text, "more lines left out]\n10 matches in 1 file") {
		t.Fatalf("%d bytes\n%s", len(res.Text), res.Text)
	}
}

func TestCodeSearchContentKeepsTheFirstFilesByPath(t *testing.T) {
	env := testEnv(t)
	for i := 50; i >= 1; i-- {
		writeTestFile(t, env, fmt.Sprintf("f%02d.txt", i), "x\nhit\n")
	}
	writeTestFile(t, env, "long.txt", strings.Repeat("y", 100<<10)+" hit\n")
	res := call(t, env, CodeSearch2, `{"pattern":"hit","mode":"content","context":1}`)
	lines := strings.Split(res.Text, "\n")
	if len(lines) != 41 || lines[0] != "f01.txt-1- x" || lines[1] != "f01.txt:2: hit" || lines[39] != "f20.txt:2: hit" ||
		lines[40] != "51 matches in 51 files (31 matching lines not shown: at most 40 lines, 10 matches per file; narrow with path or glob)" {
		t.Fatalf("%s", res.Text)
	}
	res = call(t, env, CodeSearch2, `{"pattern":"hit","mode":"content","path":"long.txt"}`)
	if res.Text != "long.txt:1: "+strings.Repeat("y", 300)+" … [102104 more characters]\n1 match in 1 file" {
		t.Fatalf("%.400s", res.Text)
	}
}

// Hidden files hold text an agent looks for (CI workflows, example
// environments, linter settings): they are searched, while .gitignore is
// still honoured and .git/ is never entered.
func TestCodeSearchReadsHiddenFilesButNotGit(t *testing.T) {
	env := searchRepo(t)
	writeTestFile(t, env, "repos/app/.github/workflows/ci.yml", "run: make deploy-target\n")
	writeTestFile(t, env, "repos/app/.env.example", "deploy-target=staging\n")
	writeTestFile(t, env, "repos/app/.eslintrc.json", "{\"deploy-target\": true}\n")
	writeTestFile(t, env, "repos/app/.git/config", "[remote] deploy-target\n")
	writeTestFile(t, env, "repos/app/.cache.log", "deploy-target\n")
	want := ".env.example: 1\n.eslintrc.json: 1\n.github/workflows/ci.yml: 1\n3 matches in 3 files"
	if res := call(t, env, CodeSearch2, `{"pattern":"deploy-target"}`); res.Text != want {
		t.Fatalf("hidden files:\n%s\nwant\n%s", res.Text, want)
	}
	if res := call(t, env, CodeSearch2, `{"pattern":"deploy-target","glob":"*.yml"}`); res.Text != ".github/workflows/ci.yml: 1\n1 match in 1 file" {
		t.Fatalf("hidden files with a glob:\n%s", res.Text)
	}
}
