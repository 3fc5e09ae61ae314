package workspaces

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// A parked sandbox gives its place under the cap to another agent, is kept
// by the orphan clean-up, comes back as itself at the agent's next call,
// and goes for good with an explicit stop.
func TestParkedSandboxThawsAsItselfAndGoesWithAStop(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "docker")
	m, agent := manager(t, w, Options{MaxSandboxes: 1})
	ctx := context.Background()
	exec(t, m, agent, "true")
	first := m.SandboxID(agent)
	if err := m.park(agent); err != nil {
		t.Fatal(err)
	}
	other := "agent-" + uuid.NewString()
	t.Cleanup(func() { _ = w.driver.RemoveVolume(context.Background(), HomeVolume(other)) })
	exec(t, m, other, "true")
	if _, err := m.CleanupOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := agentSandboxes(t, w.driver, agent); !slices.Equal(ids, []string{first}) {
		t.Fatalf("after the orphan clean-up the agent has %v, want its parked %s", ids, first)
	}
	if err := m.Stop(ctx, other); err != nil {
		t.Fatal(err)
	}
	exec(t, m, agent, "true")
	if id := m.SandboxID(agent); id != first {
		t.Fatalf("thawed sandbox = %s, want %s", id, first)
	}
	if err := m.park(agent); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(ctx, agent); err != nil {
		t.Fatal(err)
	}
	if ids := agentSandboxes(t, w.driver, agent); len(ids) != 0 {
		t.Fatalf("after a stop the parked sandbox is still there: %v", ids)
	}
}
