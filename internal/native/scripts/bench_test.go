package scripts_test

import (
	"testing"

	"github.com/guilds/guilds/internal/native/scripts"
)

// BenchmarkScriptRun is one script_run of a script that prints its
// arguments, on the sandbox image with the sandbox already up: the
// snapshot lookup, the file written through the file API, the helper's
// exec and python3's start.
func BenchmarkScriptRun(b *testing.B) {
	e := newEnv(b, 0)
	run := e.newRun()
	e.ok(run, scripts.ToolCreate, map[string]any{"name": "echo", "description": "print my arguments", "source": echoPy})
	args := map[string]any{"name": "echo", "arguments": map[string]any{"n": 1}}
	e.ok(run, scripts.ToolRun, args)
	b.ResetTimer()
	for b.Loop() {
		e.ok(run, scripts.ToolRun, args)
	}
}
