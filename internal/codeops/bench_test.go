package codeops

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/codeproto"
)

// shellBenchCommands are the commands the shell benchmarks run: one that
// cannot change directory, and one that does (its result records where it
// ended, which costs bash a fork).
var shellBenchCommands = map[string]string{
	"plain": "echo hello; ls >/dev/null",
	"cd":    "cd . && echo hello; ls >/dev/null",
}

// BenchmarkShellCall is one shell tool call through the helper's code path
// (log file, cwd carried over, shaping), against BenchmarkBareBash, the
// same command run with bash -c.
//
//	go test ./internal/codeops -run '^$' -bench 'ShellCall|BareBash' -count 6
func BenchmarkShellCall(b *testing.B) {
	for name, command := range shellBenchCommands {
		b.Run(name, func(b *testing.B) {
			env := testEnv(b)
			args, _ := json.Marshal(ShellArgs{Command: command})
			b.ReportAllocs()
			for b.Loop() {
				if res := Shell(context.Background(), env, args); res.Text != "hello" {
					b.Fatalf("%q", res.Text)
				}
			}
		})
	}
}

func BenchmarkBareBash(b *testing.B) {
	for name, command := range shellBenchCommands {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				cmd := exec.Command("bash", "-c", command)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil || string(out) != "hello\n" {
					b.Fatalf("%q %v", out, err)
				}
			}
		})
	}
}

// benchRepo is a large real repository the project did not write:
// GUILDS_BENCH_REPO, else Temporal's server module from the module cache.
func benchRepo(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("GUILDS_BENCH_REPO"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		b.Skip("no module cache")
	}
	matches, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "go.temporal.io", "server@*"))
	if len(matches) == 0 {
		b.Skip("no large repository: set GUILDS_BENCH_REPO")
	}
	return matches[len(matches)-1]
}

// BenchmarkCodeSearch runs code_search over a large repository against
// BenchmarkPlainRg, rg itself on the same query with its default output.
//
//	go test ./internal/codeops -run '^$' -bench 'CodeSearch|PlainRg' -count 6
func BenchmarkCodeSearch(b *testing.B) {
	repo := benchRepo(b)
	env, err := NewTestEnv(repo, codeproto.Request{})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"files", "content"} {
		b.Run(mode, func(b *testing.B) {
			args := json.RawMessage(`{"pattern":"func New[A-Z]\\w*\\(","mode":"` + mode + `"}`)
			b.ReportAllocs()
			for b.Loop() {
				if res := CodeSearch(context.Background(), env, args, nil); res.Meta["matches"] == nil || res.Meta["matches"] == 0 {
					b.Fatalf("%q", res.Text)
				}
			}
		})
	}
}

func BenchmarkPlainRg(b *testing.B) {
	repo := benchRepo(b)
	for mode, flags := range map[string][]string{"files": {"--count-matches"}, "content": {"--line-number"}} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cmd := exec.Command("rg", append(flags, `func New[A-Z]\w*\(`)...)
				cmd.Dir = repo
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
