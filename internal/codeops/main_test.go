package codeops

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestMain lets the test binary stand in for guilds-code when a background
// job re-executes "the helper" (os.Executable) as its supervisor.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == JobArg {
		os.Exit(SuperviseJob(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func syscallTime(sec int64) time.Time { return time.Unix(sec, 0) }

// CodeSearch2 is CodeSearch without a symbol engine, in the shape of the
// other tool functions.
func CodeSearch2(ctx context.Context, env *Env, args json.RawMessage) codeproto.Response {
	return CodeSearch(ctx, env, args, nil)
}
