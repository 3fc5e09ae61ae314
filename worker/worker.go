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

// Limits size the worker (config.Worker); a zero field keeps the SDK's default.
type Limits struct {
	MaxActivities    int // activities at once, and local activities (quick tool calls) at once
	MaxWorkflowTasks int
	ActivityPollers  int
	WorkflowPollers  int
}

// Run starts a worker on TaskQueue with the given registrations and blocks
// until ctx ends. rep (nil: off) receives the failures the platform did not
// expect (reportInterceptor).
func Run(ctx context.Context, c client.Client, log *slog.Logger, rep *errorreport.Reporter, regs ...Registration) error {
	return RunWith(ctx, c, log, rep, Limits{}, regs...)
}

// RunWith is Run with the worker sized by lim.
func RunWith(ctx context.Context, c client.Client, log *slog.Logger, rep *errorreport.Reporter, lim Limits, regs ...Registration) error {
	if log == nil {
		log = slog.Default()
	}
	opts := sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      lim.MaxActivities,
		MaxConcurrentLocalActivityExecutionSize: lim.MaxActivities,
		MaxConcurrentWorkflowTaskExecutionSize:  lim.MaxWorkflowTasks,
		MaxConcurrentActivityTaskPollers:        lim.ActivityPollers,
		MaxConcurrentWorkflowTaskPollers:        lim.WorkflowPollers,
	}
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
	log.Info("worker started", "task_queue", TaskQueue, "max_activities", lim.MaxActivities,
		"max_workflow_tasks", lim.MaxWorkflowTasks, "activity_pollers", lim.ActivityPollers, "workflow_pollers", lim.WorkflowPollers)
	<-ctx.Done()
	w.Stop()
	return nil
}
