package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
)

// dialTemporal connects to Temporal's frontend. A frontend that is not up
// yet (a whole install starting at once, or Temporal restarting) is waited
// for: the process says so in its log at each try, backing off to one try
// every 15 s, and goes on once the frontend answers. Only the end of ctx (the
// operator's stop) gives up.
func dialTemporal(ctx context.Context, opts client.Options, log *slog.Logger) (client.Client, error) {
	wait := time.Second
	for try := 1; ; try++ {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			if try > 1 {
				log.Info("reached Temporal", "address", opts.HostPort, "tries", try)
			}
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cannot reach Temporal at %s (set TEMPORAL_ADDRESS): %w", opts.HostPort, err)
		}
		log.Warn("waiting for Temporal (set TEMPORAL_ADDRESS if this is not where it runs)",
			"address", opts.HostPort, "try", try, "next_try_in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while waiting for Temporal at %s: %w", opts.HostPort, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 15*time.Second)
	}
}
