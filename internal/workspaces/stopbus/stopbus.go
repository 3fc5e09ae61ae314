// Package stopbus carries the orders that end agents' workspaces from the
// process that decided (the API) to the workers that hold them. An order
// goes to every worker over one Redis channel; a worker that holds none of
// the agents' sandboxes has nothing to do, and one that missed the order
// (Redis down, worker restarting) is caught up by the orphan reaper
// (workspaces.Manager.ReapHomes) for deleted agents and by the idle stop for
// the rest.
package stopbus

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// Channel is the Redis channel the orders travel on.
const Channel = "guilds:workspaces:stop"

// Order ends the sandboxes of some agents, and with RemoveHome deletes
// their home volumes too, or with DropShellLogs their shell logs.
type Order struct {
	Agents     []string `json:"agents"`
	RemoveHome bool     `json:"remove_home,omitempty"`
	// DropShellLogs deletes the agents' persistent shell logs before the
	// stop: a secret left their redaction set, and a log read back later
	// would show it in clear (the stop ends the background commands that
	// were started with it).
	DropShellLogs bool `json:"drop_shell_logs,omitempty"`
	// Why is logged by the worker that carries the order out, e.g.
	// "agent deleted".
	Why string `json:"why"`
}

// Publish sends the order to every worker listening. Nothing is sent for
// an order without agents.
func Publish(ctx context.Context, rdb *redis.Client, o Order) error {
	if len(o.Agents) == 0 {
		return nil
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if err := rdb.Publish(ctx, Channel, raw).Err(); err != nil {
		return fmt.Errorf("stopbus: publish %q for %d agents: %w", o.Why, len(o.Agents), err)
	}
	return nil
}

// Listen hands every order that arrives to apply until ctx ends; ready, if
// not nil, is closed once the subscription is in place. An order that does
// not decode is logged and dropped. go-redis resubscribes after a broken
// connection by itself.
func Listen(ctx context.Context, rdb *redis.Client, log *slog.Logger, ready chan<- struct{}, apply func(context.Context, Order)) error {
	ps := rdb.Subscribe(ctx, Channel)
	defer func() { _ = ps.Close() }()
	if _, err := ps.Receive(ctx); err != nil {
		return fmt.Errorf("stopbus: subscribe: %w", err)
	}
	if ready != nil {
		close(ready)
	}
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-ch:
			if !ok {
				return nil
			}
			var o Order
			if err := json.Unmarshal([]byte(msg.Payload), &o); err != nil {
				log.WarnContext(ctx, "workspace stop order that does not decode dropped", "err", err)
				continue
			}
			apply(ctx, o)
		}
	}
}
