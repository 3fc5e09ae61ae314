package codegraph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks run on a large real repository the project did not
// write: CODEGRAPH_BENCH_REPO, else a big module of the module cache. They
// skip when there is none.
//
//	go test -run '^$' -bench . -benchtime 1x ./internal/codegraph/
var bigCandidates = []string{"go.temporal.io/server@*", "google.golang.org/grpc@*", "golang.org/x/tools@*"}

var big struct {
	once sync.Once
	home string // a workspace home holding repos/<name>
	name string
	err  string
}

func bigRepo(b *testing.B) (*Env, string) {
	b.Helper()
	big.once.Do(func() {
		src := os.Getenv("CODEGRAPH_BENCH_REPO")
		if src == "" {
			out, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				big.err = "no module cache"
				return
			}
			cache := strings.TrimSpace(string(out))
			for _, c := range bigCandidates {
				m, _ := filepath.Glob(filepath.Join(cache, c))
				if len(m) > 0 {
					sort.Strings(m)
					src = m[len(m)-1]
					break
				}
			}
		}
		if src == "" {
			big.err = "no large repository: set CODEGRAPH_BENCH_REPO"
			return
		}
		if st, err := os.Stat(src); err != nil || !st.IsDir() {
			big.err = "CODEGRAPH_BENCH_REPO " + src + " is not a folder"
			return
		}
		home, err := os.MkdirTemp("", "codegraph-bench-")
		if err != nil {
			big.err = err.Error()
			return
		}
		big.home, big.name = home, "big"
		dst := filepath.Join(home, "repos", big.name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			big.err = err.Error()
			return
		}
		// cp keeps it simple; the module cache is read-only, the copy must not be.
		if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
			big.err = string(out)
			return
		}
		if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
			big.err = "chmod: " + string(out)
			return
		}
		// A clone is a git work tree: list its files the way a real one is.
		git := exec.Command("sh", "-c", "git init -q && git add -A")
		git.Dir = dst
		if out, err := git.CombinedOutput(); err != nil {
			big.err = "git: " + string(out)
			return
		}
	})
	if big.err != "" {
		b.Skip(big.err)
	}
	return &Env{Home: big.home, Cwd: filepath.Join(big.home, "repos", big.name)}, filepath.Join(big.home, "repos", big.name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if big.home != "" {
		if err := os.RemoveAll(big.home); err != nil {
			fmt.Fprintln(os.Stderr, "remove the benchmark repository:", err)
		}
	}
	os.Exit(code)
}

func openBig(b *testing.B, env *Env) *Graph {
	g, err := Open(context.Background(), filepath.Join(env.Home, "repos", big.name), env.cacheDir(big.name))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkBuild builds the graph from nothing.
func BenchmarkBuild(b *testing.B) {
	env, _ := bigRepo(b)
	b.ReportAllocs()
	var g *Graph
	for i := 0; i < b.N; i++ {
		if err := os.RemoveAll(env.cacheDir(big.name)); err != nil {
			b.Fatal(err)
		}
		g = openBig(b, env)
	}
	defs, refs := 0, 0
	for _, f := range g.Files {
		defs += len(f.Defs)
		refs += len(f.refs())
	}
	b.ReportMetric(float64(len(g.Files)), "files")
	b.ReportMetric(float64(defs), "defs")
	b.ReportMetric(float64(refs), "refs")
	if st, err := os.Stat(filepath.Join(env.cacheDir(big.name), storeName)); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "store-MiB")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
}

// BenchmarkRefreshOneEdit edits one file and refreshes: one parse.
func BenchmarkRefreshOneEdit(b *testing.B) {
	env, root := bigRepo(b)
	openBig(b, env)
	g := openBig(b, env)
	var victim string
	for _, f := range g.Files {
		if f.Lang != "" && len(f.Defs) > 5 {
			victim = filepath.Join(root, filepath.FromSlash(f.Path))
			break
		}
	}
	orig, err := os.ReadFile(victim)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile(victim, orig, 0o644); err != nil {
			b.Error(err)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		edited := append(append([]byte{}, orig...), []byte("\nfunc benchEdited"+strings.Repeat("x", i)+"() {}\n")...)
		if err := os.WriteFile(victim, edited, 0o644); err != nil {
			b.Fatal(err)
		}
		g = openBig(b, env)
		if g.Stats.Parsed != 1 {
			b.Fatalf("refresh parsed %d files, want 1", g.Stats.Parsed)
		}
	}
}

// BenchmarkFind is a whole code_find call as the helper makes it: load the
// stored graph, refresh it (nothing changed), rank.
func BenchmarkFind(b *testing.B) {
	env, _ := bigRepo(b)
	openBig(b, env)
	b.ReportAllocs()
	b.ResetTimer()
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := call(b, Find, env, map[string]any{"question": "where is the history task executed"})
		took = append(took, time.Since(start))
		if strings.HasPrefix(r.Text, "ERROR") {
			b.Fatal(r.Text)
		}
	}
	reportP50(b, took)
}

// BenchmarkCallers is a whole code_callers call, depth 2.
func BenchmarkCallers(b *testing.B) {
	env, _ := bigRepo(b)
	openBig(b, env)
	b.ReportAllocs()
	b.ResetTimer()
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := call(b, Callers, env, map[string]any{"symbol": "NewError", "depth": 2})
		took = append(took, time.Since(start))
		if strings.HasPrefix(r.Text, "ERROR") {
			b.Fatal(r.Text)
		}
	}
	reportP50(b, took)
}

// BenchmarkSymbols is code_search mode symbols; BenchmarkPlainRg the same
// search by rg alone.
func BenchmarkSymbols(b *testing.B) {
	env, _ := bigRepo(b)
	openBig(b, env)
	b.ReportAllocs()
	b.ResetTimer()
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := call(b, Symbols, env, map[string]any{"pattern": "context.Context"})
		took = append(took, time.Since(start))
		if strings.HasPrefix(r.Text, "ERROR") {
			b.Fatal(r.Text)
		}
	}
	reportP50(b, took)
}

func BenchmarkPlainRg(b *testing.B) {
	_, root := bigRepo(b)
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("no rg")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("rg", "--json", "context.Context", ".")
		cmd.Dir = root
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen loads the stored graph and refreshes it with nothing
// changed: the fixed cost of every graph-backed call.
func BenchmarkOpen(b *testing.B) {
	env, _ := bigRepo(b)
	openBig(b, env)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		openBig(b, env)
	}
}

// reportP50 adds the median call time: the figure the targets name.
func reportP50(b *testing.B, took []time.Duration) {
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
