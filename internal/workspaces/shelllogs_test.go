package workspaces

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// An order to drop the shell logs deletes every log under the home's run
// folders, whether or not the agent's sandbox is running, keeps the rest
// of the home (each run's working directory included), and stops the
// sandbox, whose background commands may hold the secret.
func TestDropShellLogsDeletesTheLogsAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dropShellLogs(t, openWorld(t, name))
		})
	}
}

func dropShellLogs(t *testing.T, w world) {
	m, agent := manager(t, w, Options{})
	const plant = "mkdir -p .runs/r1 .runs/r2 && echo s3cret-value > .runs/r1/c1.log && echo s3cret-value > .runs/r2/c9.log && echo /home/agent/src > .runs/r1/cwd && echo mine > notes.txt"
	const look = "cat .runs/*/*.log 2>/dev/null; cat .runs/r1/cwd notes.txt"
	for _, running := range []bool{true, false} {
		exec(t, m, agent, plant)
		if !running {
			if err := m.Stop(context.Background(), agent); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Apply(context.Background(), stopbus.Order{Agents: []string{agent}, DropShellLogs: true, Why: "test"}); err != nil {
			t.Fatalf("running=%v: %v", running, err)
		}
		if id := m.SandboxID(agent); id != "" {
			t.Fatalf("running=%v: the sandbox (and its background commands) outlived the order: %s", running, id)
		}
		if got := exec(t, m, agent, look); got != "/home/agent/src\nmine\n" {
			t.Fatalf("running=%v: the home after the drop shows %q", running, got)
		}
	}
}
