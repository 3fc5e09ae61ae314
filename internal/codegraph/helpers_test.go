package codegraph

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// newHome makes a workspace home holding the fixture repositories under
// repos/, and an Env whose working directory is cwd (relative to home).
func newHome(t testing.TB, cwd string, repos ...string) (*Env, string) {
	t.Helper()
	home := t.TempDir()
	for _, r := range repos {
		copyTree(t, filepath.Join("testdata/repos", r), filepath.Join(home, "repos", r))
	}
	env := &Env{Home: home, Cwd: filepath.Join(home, cwd)}
	return env, home
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func call(t testing.TB, q func(context.Context, *Env, json.RawMessage) Result, env *Env, args any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return q(context.Background(), env, raw)
}
