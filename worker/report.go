package worker

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/guilds/guilds/internal/errorreport"
)

// reportInterceptor sends the platform's own failures to error reporting: an
// activity's panic or untyped error (a typed ApplicationError is an expected
// outcome, such as a refused login or bad input) and a workflow's error. Only
// the message and the run id go; an activity's arguments and results never do.
type reportInterceptor struct {
	interceptor.WorkerInterceptorBase
	rep *errorreport.Reporter
}

func (r *reportInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &reportActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, rep: r.rep}
}

func (r *reportInterceptor) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &reportWorkflow{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, rep: r.rep}
}

type reportActivity struct {
	interceptor.ActivityInboundInterceptorBase
	rep *errorreport.Reporter
}

func (a *reportActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (out any, err error) {
	info := activity.GetInfo(ctx)
	tags := errorreport.Tags{Component: "activity " + info.ActivityType.Name, Run: runID(info.WorkflowExecution.ID)}
	defer func() {
		if v := recover(); v != nil {
			a.rep.Panic(ctx, v, tags)
			panic(v)
		}
	}()
	out, err = a.Next.ExecuteActivity(ctx, in)
	var ae *temporal.ApplicationError
	if err != nil && !errors.As(err, &ae) && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		a.rep.Error(ctx, err, tags)
	}
	return out, err
}

type reportWorkflow struct {
	interceptor.WorkflowInboundInterceptorBase
	rep *errorreport.Reporter
}

func (w *reportWorkflow) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	out, err := w.Next.ExecuteWorkflow(ctx, in)
	var ce *temporal.CanceledError
	if err != nil && !workflow.IsReplaying(ctx) && !errors.As(err, &ce) {
		info := workflow.GetInfo(ctx)
		tags := errorreport.Tags{Component: "workflow " + info.WorkflowType.Name, Run: runID(info.WorkflowExecution.ID)}
		// Off the workflow's goroutine: sending blocks, and a workflow task
		// that blocks for a second is taken for a deadlock.
		w.rep.ErrorAsync(context.Background(), err, tags)
	}
	return out, err
}

// runID is the run's id when the workflow is a run ("run-<id>").
func runID(workflowID string) string {
	id, ok := strings.CutPrefix(workflowID, "run-")
	if !ok {
		return ""
	}
	return id
}
