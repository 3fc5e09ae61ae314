package code

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// BenchmarkLocalCodeToolVsBareExec is the helper's own cost: on the local
// driver an exec is a bare fork, so the helper's start and the shell's
// bookkeeping (run folder, log, shaping) show. The figure that counts is
// the sandbox image's (BenchmarkCodeToolVsBareExec in internal/native).
func BenchmarkLocalCodeToolVsBareExec(b *testing.B) {
	ws := newLocalWorkspace(b)
	reg := tools.NewRegistry()
	Register(reg, Deps{Workspace: ws, Helper: buildHelper(b)})
	ctx := context.Background()
	call := tools.Call{Name: ToolShell, Args: json.RawMessage(`{"command":"echo hi"}`), RunID: "bench-run", AgentID: "bench-agent", Seq: 3, CallID: "bench"}
	if out := reg.Invoke(ctx, call); out != "hi" {
		b.Fatalf("warm-up: %q", out)
	}
	b.Run("code_tool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if out := reg.Invoke(ctx, call); out != "hi" {
				b.Fatalf("%q", out)
			}
		}
	})
	b.Run("bare_exec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := ws.Exec(ctx, "bench-agent", sandbox.ExecRequest{Cmd: []string{"bash", "-c", "echo hi"}})
			if err != nil || string(res.Stdout) != "hi\n" {
				b.Fatalf("%q %v", res.Stdout, err)
			}
		}
	})
}
