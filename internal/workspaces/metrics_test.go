package workspaces

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/local"
)

// execCount is guilds_sandbox_exec_duration_seconds' sample count for
// outcome, as /metrics would show it.
func execCount(t *testing.T, outcome string) uint64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "guilds_sandbox_exec_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// TestExecsAreCounted: every command an agent runs through the manager is
// one observation of guilds_sandbox_exec_duration_seconds, by outcome, on
// every driver; the local driver's home still reaches the helper (counting
// must not hide the driver's HostPath). Not parallel: the counts are exact.
func TestExecsAreCounted(t *testing.T) {
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{Idle: time.Minute})
			ok, nonzero := execCount(t, "ok"), execCount(t, "nonzero")
			out := exec(t, m, agent, `echo "$`+codeproto.HomeEnv+`"`)
			if _, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "exit 3"}, Timeout: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if got := execCount(t, "ok") - ok; got != 1 {
				t.Errorf("ok execs counted %d times, want 1", got)
			}
			if got := execCount(t, "nonzero") - nonzero; got != 1 {
				t.Errorf("nonzero execs counted %d times, want 1", got)
			}
			if ld, isLocal := w.driver.(*local.Driver); isLocal {
				home, err := ld.HostPath(m.SandboxID(agent), sandbox.HomeDir)
				if err != nil || out != home+"\n" {
					t.Fatalf("helper home = %q, want %q (%v)", out, home, err)
				}
			}
		})
	}
}

// TestAFailedExecIsCountedAsError: a command that never ran (the sandbox
// could not be made) is an error, once.
func TestAFailedExecIsCountedAsError(t *testing.T) {
	ld, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir(), Scope: "test-" + uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(ld, Options{})
	defer func() { _ = m.Close(context.Background()) }()
	before := execCount(t, "error")
	if _, err := m.Exec(context.Background(), "bad/agent", sandbox.ExecRequest{Cmd: []string{"true"}}); err == nil {
		t.Fatal("a bad agent id ran")
	}
	if got := execCount(t, "error") - before; got != 1 {
		t.Errorf("failed execs counted %d times, want 1", got)
	}
}
