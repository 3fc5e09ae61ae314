package codegraph

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// listing describes every file under root with its size, mode and mtime.
func listing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		lines = append(lines, fmt.Sprintf("%s %d %v %d", rel, info.Size(), info.Mode(), info.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func openPoly(t *testing.T, env *Env) *Graph {
	t.Helper()
	g, err := Open(context.Background(), filepath.Join(env.Home, "repos", "poly"), env.cacheDir("poly"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// bump gives a file a later mtime, as an editor's save would.
func bump(t *testing.T, p string, content []byte) {
	t.Helper()
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

// The first call builds and stores the graph; the next ones re-parse only
// what changed in the working tree: an edit, an added file, a removed one;
// a file whose mtime moved but whose content did not is not parsed again.
func TestRefreshParsesOnlyChangedFiles(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	root := filepath.Join(home, "repos", "poly")

	g := openPoly(t, env)
	if !g.Stats.Built || g.Stats.Parsed != 10 {
		t.Fatalf("first open: %+v, want a build parsing the 10 source files", g.Stats)
	}
	if _, err := os.Stat(filepath.Join(env.cacheDir("poly"), storeName)); err != nil {
		t.Fatalf("graph not stored: %v", err)
	}
	if g = openPoly(t, env); g.Stats.Built || g.Stats.Parsed != 0 {
		t.Fatalf("unchanged tree: %+v", g.Stats)
	}

	store := filepath.Join(root, "gosrc/store/store.go")
	src, _ := os.ReadFile(store)
	edited := strings.Replace(string(src), "func (s *Store) Put(", "func (s *Store) Delete(key string) { delete(s.items, key) }\n\nfunc (s *Store) Put(", 1)
	bump(t, store, []byte(edited))
	g = openPoly(t, env)
	if g.Stats.Parsed != 1 {
		t.Fatalf("one edit: parsed %d files, want 1", g.Stats.Parsed)
	}
	if ids := g.lookup("Store.Delete", ""); len(ids) != 1 {
		t.Fatalf("the edit's new method is not in the graph: %v", ids)
	}

	bump(t, store, []byte(edited)) // same content, new mtime
	if g = openPoly(t, env); g.Stats.Parsed != 0 {
		t.Fatalf("touched file re-parsed: %+v", g.Stats)
	}

	if err := os.WriteFile(filepath.Join(root, "py/extra.py"), []byte("def helper():\n    return total_area([])\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "web/view.tsx")); err != nil {
		t.Fatal(err)
	}
	g = openPoly(t, env)
	if g.Stats.Parsed != 1 || g.Stats.Removed != 1 {
		t.Fatalf("add one, remove one: %+v", g.Stats)
	}
	if g.byPath["web/view.tsx"] != nil {
		t.Fatal("removed file still in the graph")
	}
	r := call(t, Callers, env, CallersArgs{Symbol: "total_area"})
	if !strings.Contains(r.Text, "helper  py/extra.py:2") {
		t.Fatalf("new caller missing:\n%s", r.Text)
	}
	r = call(t, Callers, env, CallersArgs{Symbol: "Api.handle"})
	if strings.Contains(r.Text, "view.tsx") {
		t.Fatalf("removed file still calls:\n%s", r.Text)
	}
}

// Building and querying the graph writes nothing into the repository, a
// git work tree included (its index and refs stay as they were).
func TestNothingWrittenIntoTheRepository(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	root := filepath.Join(home, "repos", "poly")
	gitInit(t, root)
	before := listing(t, root)
	call(t, Map, env, MapArgs{Repo: "poly"})
	call(t, Find, env, FindArgs{Question: "store"})
	call(t, Outline, env, OutlineArgs{Path: "rs/lib.rs"})
	call(t, Callers, env, CallersArgs{Symbol: "slugify", Depth: 3})
	call(t, Symbols, env, SymbolsArgs{Pattern: "items"})
	if after := listing(t, root); after != before {
		t.Fatalf("the repository changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(env.cacheDir("poly"), storeName)); err != nil {
		t.Fatalf("graph not in the cache: %v", err)
	}
}

func gitInit(t *testing.T, root string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "add", "."},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "fixture"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// In a git work tree the graph holds the tracked and untracked files but
// not the ignored ones; dependency folders are skipped in any tree.
func TestIgnoredFilesStayOut(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	root := filepath.Join(home, "repos", "poly")
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "gen/\n")
	write("gen/out.go", "package gen\nfunc Generated() {}\n")
	write("web/node_modules/dep/index.js", "function depOnly() {}\n")
	gitInit(t, root)
	write("py/untracked.py", "def fresh():\n    pass\n")

	g := openPoly(t, env)
	for _, p := range []string{"gen/out.go", "web/node_modules/dep/index.js"} {
		if g.byPath[p] != nil {
			t.Errorf("%s is in the graph", p)
		}
	}
	if g.byPath["py/untracked.py"] == nil {
		t.Error("an untracked, not ignored file is missing")
	}
	// An ignored file can still be outlined by path.
	r := call(t, Outline, env, OutlineArgs{Path: "gen/out.go"})
	if !strings.Contains(r.Text, "func Generated()") {
		t.Errorf("outline of an ignored file:\n%s", r.Text)
	}
}

// A damaged or foreign store is rebuilt, not trusted.
func TestDamagedStoreIsRebuilt(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	openPoly(t, env)
	p := filepath.Join(env.cacheDir("poly"), storeName)
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	g := openPoly(t, env)
	if !g.Stats.Built || g.Stats.Parsed != 10 {
		t.Fatalf("half a store: %+v", g.Stats)
	}
	if len(g.lookup("Store.Get", "")) != 1 {
		t.Fatal("rebuilt graph lacks Store.Get")
	}
}

// The store round-trips every field, references included.
func TestStoreRoundTrip(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	g := openPoly(t, env)
	data, err := encodeStore(g.Files)
	if err != nil {
		t.Fatal(err)
	}
	again := decodeStore(string(data))
	if len(again) != len(g.Files) {
		t.Fatalf("%d files back, want %d", len(again), len(g.Files))
	}
	for i, f := range g.Files {
		if dumpFile(again[i]) != dumpFile(f) || fmt.Sprint(again[i].Counts) != fmt.Sprint(f.Counts) {
			t.Errorf("%s differs after a round trip", f.Path)
		}
	}
}

// A link inside a repository is never followed: its target, even inside
// the workspace, is neither parsed nor searched; a repository folder that
// is a link out of the workspace is refused.
func TestLinksAreNotFollowed(t *testing.T) {
	env, home := newHome(t, "repos/poly", "poly")
	root := filepath.Join(home, "repos", "poly")
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.go")
	if err := os.WriteFile(secret, []byte("package s\nfunc SecretThing() {} // TOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "gosrc/linked.go")); err != nil {
		t.Fatal(err)
	}
	g := openPoly(t, env)
	if g.byPath["gosrc/linked.go"] != nil {
		t.Fatal("a link is in the graph")
	}
	if r := call(t, Symbols, env, SymbolsArgs{Pattern: "TOPSECRET"}); r.Meta["matches"] != 0 || strings.Contains(r.Text, "SecretThing") {
		t.Fatalf("search read through a link:\n%s", r.Text)
	}
	if err := os.Symlink(outside, filepath.Join(home, "repos", "escape")); err != nil {
		t.Fatal(err)
	}
	r := call(t, Map, env, MapArgs{Repo: "escape"})
	if !strings.HasPrefix(r.Text, "ERROR: repo: /home/agent/repos/escape leads outside /home/agent") {
		t.Fatalf("map of a link out: %q", r.Text)
	}
}

// Calls on one repository at once take turns on the graph: each sees a
// whole graph and the store stays readable.
func TestConcurrentCallsShareOneGraph(t *testing.T) {
	env, _ := newHome(t, "repos/poly", "poly")
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			g, err := Open(context.Background(), filepath.Join(env.Home, "repos", "poly"), env.cacheDir("poly"))
			if err == nil && len(g.lookup("Store.Get", "")) != 1 {
				err = fmt.Errorf("graph without Store.Get: %+v", g.Stats)
			}
			errs <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if g := openPoly(t, env); g.Stats.Built || g.Stats.Parsed != 0 {
		t.Fatalf("after the concurrent calls: %+v", g.Stats)
	}
}
