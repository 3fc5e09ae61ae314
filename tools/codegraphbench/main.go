// Command codegraphbench measures the code graph's answers (code_callers
// and code_find, through the guilds-code helper as the local driver calls
// it) against gopls on real Go modules: a fixed-seed sample of
// definitions across strata, scored by precision, recall and F1 of
// callers, precision of the edges the graph does not flag as guesses,
// recall of static calls, and the rate code_find names the definition
// first.
//
//	codegraphbench -helper .bin/guilds-code -gopls .bin/gopls \
//	    -modules github.com/jackc/pgx/v5@v5.12.0,github.com/gin-gonic/gin@v1.12.0 -per 16
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	helperBin := flag.String("helper", "", "the guilds-code binary")
	goplsBin := flag.String("gopls", "", "the gopls binary")
	modules := flag.String("modules", "", "comma-separated module@version, taken from the module cache")
	per := flag.Int("per", 16, "definitions sampled per stratum and module")
	seed := flag.Uint64("seed", 37, "the sample's seed")
	minF1 := flag.Float64("min-f1", 0, "fail when a module's callers F1 is below this")
	minPrecision := flag.Float64("min-unflagged-precision", 0, "fail when the unflagged edges' precision is below this")
	verbose := flag.Bool("v", false, "print every disagreement")
	others := corpusFlags()
	flag.Parse()
	if *helperBin == "" || (*goplsBin == "" || *modules == "") && !others.asked() {
		flag.Usage()
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "codegraphbench-")
	if err != nil {
		fail(err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	home := filepath.Join(work, "home", "agent")
	failed := false
	var all []score
	for _, mv := range strings.Split(*modules, ",") {
		if mv == "" {
			continue
		}
		s, err := measure(work, home, mv, *helperBin, *goplsBin, *per, *seed, *verbose)
		if err != nil {
			_ = os.RemoveAll(work) // fail exits past the deferred removal
			fail(fmt.Errorf("%s: %w", mv, err))
		}
		all = append(all, s...)
		t := total(s, "")
		if t.f1() < *minF1 || t.unflaggedPrecision() < *minPrecision {
			failed = true
		}
	}
	ss, low, err := others.measure(work, home, *helperBin, *per, *seed, *verbose, func(t tally) bool {
		return t.f1() < *minF1 || t.unflaggedPrecision() < *minPrecision
	})
	if err != nil {
		_ = os.RemoveAll(work)
		fail(err)
	}
	all, failed = append(all, ss...), failed || low
	report(all)
	if failed {
		fmt.Fprintf(os.Stderr, "codegraphbench: below the floor (F1 %.2f, unflagged precision %.3f)\n", *minF1, *minPrecision)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "codegraphbench:", err)
	os.Exit(1)
}

// fetchModule copies module@version from the module cache (downloading
// it through the go command) into the workspace's repos folder.
func fetchModule(mv, repos string) (name, dir string, err error) {
	out, err := exec.Command("go", "mod", "download", "-json", mv).Output() //nolint:gosec // G204: the module the harness was told to measure
	if err != nil {
		return "", "", fmt.Errorf("go mod download: %w", err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", "", fmt.Errorf("go mod download: no folder for %s", mv)
	}
	path, _, _ := strings.Cut(mv, "@")
	name = strings.NewReplacer("/", "_", ".", "_").Replace(path)
	dir = filepath.Join(repos, name)
	return name, dir, copyTree(info.Dir, dir)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o750)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p) //nolint:gosec // G304: a file of the module cache
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600) //nolint:gosec // G703: under the scratch folder the harness made
	})
}
