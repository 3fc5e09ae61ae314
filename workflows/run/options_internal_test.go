package run

import (
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/tools"
)

// A remote tool's activity outlives the pool's own timeout, so a server that
// never answers ends as the pool's clear ERROR result ("… did not answer
// within 90s"), recorded by the activity, rather than as a lost activity.
func TestRemoteToolActivityOutlivesThePoolTimeout(t *testing.T) {
	for class, pool := range map[tools.Class]struct {
		name    string
		timeout time.Duration
	}{
		tools.ClassMCP:     {"tools/call", mcppool.CallTimeout},
		tools.ClassAdapter: {"longest adapter tool", host.MaxTimeout},
	} {
		got := toolOptions(class, false, "x", "{}").StartToCloseTimeout
		if got <= pool.timeout {
			t.Errorf("%s tools: activity StartToCloseTimeout %s does not exceed the pool's %s timeout %s",
				class, got, pool.name, pool.timeout)
		}
	}
}
