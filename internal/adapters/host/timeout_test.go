package host_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/testdb"
)

// slowToolAdapter's tool "long" asks for more time than the host's default
// (adapters.ToolTimeouts); every call answers how far away its deadline is.
type slowToolAdapter struct{}

func (slowToolAdapter) Name() string { return "test_tool_timeouts" }

func (slowToolAdapter) Check(context.Context, adapters.Conn) (string, error) { return "", nil }

func (slowToolAdapter) Timeout(tool string) time.Duration {
	if tool == "long" {
		return time.Hour // above the ceiling: capped
	}
	return 0
}

func (slowToolAdapter) Call(ctx context.Context, _ adapters.Conn, _ string, _ json.RawMessage) (string, error) {
	dl, ok := ctx.Deadline()
	switch left := time.Until(dl); {
	case !ok:
		return "none", nil
	case left <= 2*time.Second:
		return "default", nil
	case left > time.Minute && left <= host.MaxTimeout:
		return "long", nil
	default:
		return "other", nil
	}
}

func init() { adapters.Register(slowToolAdapter{}) }

// The host bounds an adapter's call by the tool's own timeout when it names
// one, up to host.MaxTimeout, and by Timeout otherwise.
func TestAdapterToolTimeouts(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	id := adapterRow(t, db, "slowtools", "https://api.slowtools.test", "token", `{"adapter":"test_tool_timeouts"}`, connstore.StatusPending)
	eng := newEngine(t, db, "slowtools")
	pool := host.New(host.Options{DB: db, Credentials: eng.Resolver(), Timeout: 2 * time.Second})
	if _, err := connectKey(ctx, db, eng, pool, id, "any-key-0123"); err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"long": "long", "short": "default"} {
		if out, err := pool.Call(ctx, id, tool, json.RawMessage(`{}`)); err != nil || out != want {
			t.Errorf("%s: %q %v, want %q", tool, out, err, want)
		}
	}
	if got := adapters.CallTimeout(slowToolAdapter{}, "long", time.Second, host.MaxTimeout); got != host.MaxTimeout {
		t.Fatalf("CallTimeout capped at %s", got)
	}
}
