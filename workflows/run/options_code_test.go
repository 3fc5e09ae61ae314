package run

import (
	"testing"
	"time"

	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/tools"
)

// A code tool's activity outlives the helper's own timeout for the call, so
// a command past its timeout ends as its exit_code: 124 result, and a first
// graph build gets its 11 minutes.
func TestCodeToolActivityOutlivesTheHelperTimeout(t *testing.T) {
	for _, c := range []struct {
		class      tools.Class
		name, args string
		helper     time.Duration
	}{
		{tools.ClassShell, "shell", `{"command":"sleep 1"}`, code.ShellDefault},
		{tools.ClassShell, "shell", `{"command":"make","timeout_seconds":600}`, code.ShellMax},
		{tools.ClassShell, "shell", `{"command":"make","timeout_seconds":9000}`, code.ShellMax},
		{tools.ClassCode, "code_map", `{}`, code.GraphTimeout},
		{tools.ClassCode, "code_search", `{"pattern":"x","mode":"symbols"}`, code.GraphTimeout},
		{tools.ClassCode, "code_search", `{"pattern":"x"}`, code.SearchTimeout},
		{tools.ClassCode, "code_match", `{"pattern":"f($A)"}`, code.SearchTimeout},
	} {
		got := toolOptions(c.class, false, c.name, c.args).StartToCloseTimeout
		if got <= c.helper {
			t.Errorf("%s %s: activity timeout %s does not exceed the helper's %s", c.name, c.args, got, c.helper)
		}
		if c.helper == code.SearchTimeout && got >= code.GraphTimeout {
			t.Errorf("%s %s: a text search waits %s, as long as a graph build", c.name, c.args, got)
		}
	}
}
