// Package worker registers every workflow and activity on the guilds task queue
// and runs the Temporal worker.
package worker

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/guilds/guilds/internal/errorreport"
)

// TaskQueue is the one task queue of the platform.
const TaskQueue = "guilds"

// Registration adds workflows and activities to a worker. Each workflow package
// provides one, built by main with its dependencies.
type Registration func(w sdkworker.Registry)

// Run starts a worker on TaskQueue with the given registrations and blocks
// until ctx ends. rep (nil: off) receives the failures the platform did not
// expect (reportInterceptor).
func Run(ctx context.Context, c client.Client, log *slog.Logger, rep *errorreport.Reporter, regs ...Registration) error {
	if log == nil {
		log = slog.Default()
	}
	opts := sdkworker.Options{}
	if rep != nil {
		opts.Interceptors = []interceptor.WorkerInterceptor{&reportInterceptor{rep: rep}}
	}
	w := sdkworker.New(c, TaskQueue, opts)
	checked := newCheckedRegistry(w)
	for _, r := range regs {
		r(checked)
	}
	if checked.err != nil {
		return fmt.Errorf("worker registration: %w", checked.err)
	}
	if len(regs) == 0 {
		log.Warn("worker has nothing registered; waiting")
		<-ctx.Done()
		return nil
	}
	if err := w.Start(); err != nil {
		return err
	}
	log.Info("worker started", "task_queue", TaskQueue)
	<-ctx.Done()
	w.Stop()
	return nil
}
