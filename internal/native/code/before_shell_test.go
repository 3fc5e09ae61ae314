package code

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// preparing is a workspace that writes a file into the agent's home before
// each shell call, as the GitHub tokens are replaced before one.
type preparing struct {
	*localWorkspace
	calls int
}

func (p *preparing) BeforeShell(ctx context.Context, agentID string) error {
	p.calls++
	return p.CopyTo(ctx, agentID, "/home/agent/prepared.txt", []byte("prepared "+strconv.Itoa(p.calls)+"\n"), 0o644)
}

func TestShellRunsAfterTheWorkspacesPreparation(t *testing.T) {
	ws := &preparing{localWorkspace: newLocalWorkspace(t)}
	s := newSession(t, ws, buildHelper(t))
	out, _ := s.call(ToolShell, `{"command":"cat prepared.txt"}`)
	if !strings.Contains(out, "prepared 1") {
		t.Fatalf("shell: %q", out)
	}
	s.call(ToolFileRead, `{"path":"prepared.txt"}`)
	if ws.calls != 1 {
		t.Fatalf("prepared %d times; only shell prepares", ws.calls)
	}
}
