package codeops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/codeproto"
)

// testEnv is an Env over a fresh temporary home, run r1, call c1.
func testEnv(t testing.TB) *Env {
	t.Helper()
	env, err := NewTestEnv(t.TempDir(), codeproto.Request{RunID: "r1", CallID: "c1", Step: 5})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func writeTestFile(t testing.TB, env *Env, rel, content string) string {
	t.Helper()
	p := filepath.Join(env.Home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolve(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	writeTestFile(t, env, "repos/app/main.go", "package main\n")
	must(t, os.Symlink(filepath.Join(env.Home, "repos/app"), filepath.Join(env.Home, "app")))
	must(t, os.Symlink(outside, filepath.Join(env.Home, "escape")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(env.Home, "passwd")))
	must(t, os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(env.Home, "dangling")))
	must(t, os.Symlink("loop2", filepath.Join(env.Home, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(env.Home, "loop2")))
	must(t, env.SetCwd(filepath.Join(env.Home, "repos")))

	for _, tc := range []struct {
		in, display, err string
	}{
		{in: "app/main.go", display: "/home/agent/repos/app/main.go"},
		{in: "/home/agent/app/main.go", display: "/home/agent/repos/app/main.go"},
		{in: "../app/new/dir/x.go", display: "/home/agent/repos/app/new/dir/x.go"},
		{in: "/home/agent", display: "/home/agent"},
		{in: "~/repos/app/main.go", display: "/home/agent/repos/app/main.go"},
		{in: "~", display: "/home/agent"},
		{in: "..", display: "/home/agent"},
		{in: "../..", err: "outside /home/agent"},
		{in: "/etc/passwd", err: "/etc/passwd is outside /home/agent"},
		{in: "/home/agent/escape/x", err: "resolves to " + outside + "/x, outside /home/agent"},
		{in: "../passwd", err: "resolves to /etc/passwd, outside /home/agent"},
		{in: "/home/agent/dangling", err: "outside /home/agent"},
		{in: "/home/agent/loop1", err: "too many levels of symbolic links"},
		{in: "", err: "is empty"},
	} {
		fsPath, display, err := env.Resolve(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) = %q, %v; want error with %q", tc.in, display, err, tc.err)
			}
			continue
		}
		if err != nil || display != tc.display || env.Display(fsPath) != display || !strings.HasPrefix(fsPath, env.Home) {
			t.Errorf("Resolve(%q) = %q %q %v; want %q", tc.in, fsPath, display, err, tc.display)
		}
	}
}

func TestCwdAndRel(t *testing.T) {
	env := testEnv(t)
	if fsp, d := env.Cwd(); fsp != env.Home || d != "/home/agent" {
		t.Fatalf("default cwd %q %q", fsp, d)
	}
	repo := filepath.Join(env.Home, "repos", "app")
	must(t, os.MkdirAll(repo, 0o755))
	must(t, env.SetCwd(repo))
	if _, d := env.Cwd(); d != "/home/agent/repos/app" {
		t.Fatalf("cwd %q", d)
	}
	raw, _ := os.ReadFile(filepath.Join(env.Home, ".runs/r1/cwd"))
	if string(raw) != "/home/agent/repos/app\n" {
		t.Fatalf("cwd file %q", raw)
	}
	if got := env.Rel(filepath.Join(repo, "a/b.go")); got != "a/b.go" {
		t.Fatalf("Rel under cwd %q", got)
	}
	if got := env.Rel(filepath.Join(env.Home, "notes.txt")); got != "/home/agent/notes.txt" {
		t.Fatalf("Rel outside cwd %q", got)
	}
	must(t, os.RemoveAll(repo))
	if _, d := env.Cwd(); d != "/home/agent" {
		t.Fatalf("cwd of a removed folder %q", d)
	}
}

func TestNewEnvRefusesUnsafeIDs(t *testing.T) {
	for _, req := range []codeproto.Request{{RunID: "../x"}, {RunID: "r", CallID: "a/b"}, {RunID: ".."}} {
		if _, err := NewTestEnv(t.TempDir(), req); err == nil || !strings.Contains(err.Error(), "_id") {
			t.Errorf("%+v: %v", req, err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
