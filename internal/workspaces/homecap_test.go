package workspaces

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// A home over MaxHomeBytes refuses the agent's next calls with an error
// naming the setting; the platform's own clean-up still runs, and a reset
// lets the agent work again.
func TestHomeOverItsCapRefusesTheNextCalls(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{MaxHomeBytes: 1 << 20, HomeCheckEvery: time.Nanosecond})
			exec(t, m, agent, "mkdir -p .runs/r && echo log > .runs/r/c.log && head -c 3000000 /dev/zero > big")
			err := tryExec(m, agent)
			var full *HomeFullError
			if !errors.As(err, &full) || !strings.Contains(err.Error(), "GUILDS_MAX_HOME_GB") {
				t.Fatalf("a call over the cap: %v", err)
			}
			if err := m.Apply(context.Background(), stopbus.Order{Agents: []string{agent}, DropShellLogs: true, Why: "test"}); err != nil {
				t.Fatalf("clean-up over the cap: %v", err)
			}
			if err := m.RemoveHome(context.Background(), agent); err != nil {
				t.Fatal(err)
			}
			if got := exec(t, m, agent, "ls"); got != "" {
				t.Fatalf("the home after a reset: %q", got)
			}
		})
	}
}
