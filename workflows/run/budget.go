package run

import (
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
)

// A budget of the run's organisation, guild or agent is reached
// (docs/adr/0516-budgets.md): the activities report it (ModelOutput.Stopped,
// ToolOutput.Stopped) and the workflow ends the run here, with no further
// model turn. These paths run only when an activity reported a reached
// budget, so histories recorded before budgets replay unchanged.

// budgetCallRefused is the result of a call of the same turn that waited for
// a person while another call of the turn reached a budget.
func budgetCallRefused(why string) string {
	return "this call did not run: " + why + ". The run stops here."
}

// refuseAsked records a refusal for each call of the turn that waits for a
// person, so every call of the turn has its answer when the run ends.
func refuseAsked(ctx workflow.Context, asked []askedCall, why string) error {
	for _, c := range asked {
		if c.task != nil {
			cancelTask(ctx, c.in, *c.task) // the server stops its work too
		}
		if err := record(ctx, c.in, runs.OutcomeRefused, budgetCallRefused(why)).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// stopped closes the run: its closing message at seq and the completed
// status with the budget as its stop reason, recorded even when the run is
// being cancelled meanwhile.
func stopped(ctx workflow.Context, runID string, st State, seq int, why string) Result {
	msg := runact.StopMessage(why)
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, bookkeepingOptions)
	in := runact.FinishInput{RunID: runID, Status: runs.StatusCompleted, StopReason: runact.StopReasonBudget + ": " + why,
		StopMessage: msg, StopSeq: seq}
	if err := workflow.ExecuteActivity(dctx, runact.FinishName, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("could not record the end of the run", "run_id", runID, "error", err)
	}
	return Result{Status: runs.StatusCompleted, Text: msg, Turns: st.Turns, Remaining: st.Remaining, Stopped: why}
}
