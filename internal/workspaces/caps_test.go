package workspaces

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox"
)

func tryExec(m *Manager, agent string) error {
	_, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"true"}, Timeout: time.Minute})
	return err
}

func wantLimit(t *testing.T, err error, setting string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Setting != setting || !strings.Contains(err.Error(), setting) {
		t.Fatalf("want a refusal naming %s, got %v", setting, err)
	}
}

// A worker runs at most MaxSandboxes sandboxes, and at most MaxPerOrg for
// one organisation; the refusal names the setting, and a stopped sandbox
// gives its place back.
func TestSandboxCapsPerBoxAndPerOrganisation(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "local")
	orgOf := map[string]string{}
	m, a1 := manager(t, w, Options{MaxSandboxes: 4, MaxPerOrg: 2,
		OrgOf: func(_ context.Context, agent string) (string, error) { return orgOf[agent], nil }})
	a2, a3, b1, b2, c1 := "agent-"+uuid.NewString(), "agent-"+uuid.NewString(), "agent-"+uuid.NewString(), "agent-"+uuid.NewString(), "agent-"+uuid.NewString()
	for _, a := range []string{a1, a2, a3} {
		orgOf[a] = "org-a"
	}
	orgOf[b1], orgOf[b2], orgOf[c1] = "org-b", "org-b", "org-c"
	t.Cleanup(func() {
		for _, a := range []string{a2, a3, b1, b2, c1} {
			_ = w.driver.RemoveVolume(context.Background(), HomeVolume(a))
		}
	})

	for _, a := range []string{a1, a2, b1} {
		if err := tryExec(m, a); err != nil {
			t.Fatalf("agent %s: %v", a, err)
		}
	}
	wantLimit(t, tryExec(m, a3), "GUILDS_MAX_SANDBOXES_PER_ORG")
	if err := tryExec(m, b2); err != nil {
		t.Fatalf("another organisation: %v", err)
	}
	wantLimit(t, tryExec(m, c1), "GUILDS_MAX_SANDBOXES")
	if ids := agentSandboxes(t, w.driver, a3); len(ids) != 0 {
		t.Fatalf("a refused agent got a sandbox: %v", ids)
	}

	// A running agent keeps its sandbox; a stop frees a place.
	if err := tryExec(m, a1); err != nil {
		t.Fatalf("a running agent was refused: %v", err)
	}
	if err := m.Stop(context.Background(), a1); err != nil {
		t.Fatal(err)
	}
	if err := tryExec(m, a3); err != nil {
		t.Fatalf("after a stop: %v", err)
	}
}
