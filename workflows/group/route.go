// Package group routes a guild's chat messages on Temporal. Every message
// posted (by an operator through the API, by an agent with group_post or
// as a group run's final answer) starts one Route workflow, id
// group-route-<message id>, which decides once who answers, creates each
// recipient's group-triggered run (once per message and agent) and runs it
// as a child, all recipients at once, then posts each run's final answer
// into the chat, which starts that message's own Route. The workflow id
// makes routing exactly-once: a second start of the same message is refused
// by Temporal, and each activity finds what an earlier attempt stored.
package group

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	groupact "github.com/guilds/guilds/activities/group"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/runs"
	runwf "github.com/guilds/guilds/workflows/run"
)

// WorkflowName is the registered name; it never changes with Go renames.
const WorkflowName = "group_route"

// WorkflowID is the Temporal workflow id of a message's routing.
func WorkflowID(messageID string) string { return "group-route-" + messageID }

// Params is the workflow input.
type Params struct {
	MessageID string `json:"message_id"`
}

// Result is what the routing did.
type Result struct {
	Method  string          `json:"method"`
	Answers []RecipientDone `json:"answers"`
}

// RecipientDone is how one recipient's turn ended.
type RecipientDone struct {
	AgentID   string `json:"agent_id"`
	RunID     string `json:"run_id,omitempty"`
	Status    string `json:"status,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
	MessageID string `json:"message_id,omitempty"` // the answer posted
}

// decideOptions: decide and deliver run as local activities, in the
// workflow's own task: they only read and write Postgres (and ask the
// routing model, whose own timeout bounds the call), and each saves a round
// trip through the task queue on the way to the first model turn. A worker
// that dies meanwhile loses the workflow task; the next worker replays it and
// runs them again, finding what they stored.
var decideOptions = workflow.LocalActivityOptions{
	// A routing model call (8 s by default) plus a few statements.
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    200 * time.Millisecond, // the posting request commits within ms
		BackoffCoefficient: 2,
		MaximumInterval:    10 * time.Second,
		MaximumAttempts:    20,
	},
}

// deliverOptions: one transaction of a few statements, keyed by message and
// agent, so retried freely.
var deliverOptions = workflow.LocalActivityOptions{
	// A transaction of a few statements plus resolving the model key.
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    500 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
		MaximumAttempts:    20,
	},
}

// writeOptions: answer writes a few rows in one transaction, keyed by the
// run, and starts a workflow, so it retries freely.
var writeOptions = workflow.ActivityOptions{
	// A transaction of a few statements plus resolving the model key.
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    500 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
		MaximumAttempts:    20,
	},
}

// Route routes one message.
func Route(ctx workflow.Context, p Params) (Result, error) {
	log := workflow.GetLogger(ctx)
	var dec groupact.DecideOutput
	dctx := workflow.WithLocalActivityOptions(ctx, decideOptions)
	if err := workflow.ExecuteLocalActivity(dctx, groupact.DecideName, groupact.DecideInput{MessageID: p.MessageID}).Get(dctx, &dec); err != nil {
		return Result{}, err
	}
	res := Result{Method: dec.Route.Method, Answers: make([]RecipientDone, len(dec.Route.Recipients))}
	wg := workflow.NewWaitGroup(ctx)
	for i, rcpt := range dec.Route.Recipients {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			res.Answers[i] = answer(ctx, p.MessageID, dec, rcpt)
			if res.Answers[i].Skipped == "" && res.Answers[i].Status != runs.StatusCompleted {
				log.Warn("a chat recipient's run did not complete", "message_id", p.MessageID,
					"agent_id", rcpt.AgentID, "run_id", res.Answers[i].RunID, "status", res.Answers[i].Status)
			}
		})
	}
	wg.Wait(ctx)
	return res, nil
}

// answer gives one recipient its run, waits for it and posts its answer.
func answer(ctx workflow.Context, messageID string, dec groupact.DecideOutput, rcpt groupchat.Recipient) RecipientDone {
	done := RecipientDone{AgentID: rcpt.AgentID}
	wctx := workflow.WithLocalActivityOptions(ctx, deliverOptions)
	var del groupact.DeliverOutput
	in := groupact.DeliverInput{MessageID: messageID, AgentID: rcpt.AgentID, History: dec.Route.History}
	if err := workflow.ExecuteLocalActivity(wctx, groupact.DeliverName, in).Get(wctx, &del); err != nil {
		done.Skipped = "could not create the run: " + err.Error()
		return done
	}
	if del.RunID == "" {
		done.Skipped = del.Skipped
		return done
	}
	done.RunID = del.RunID
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    runwf.WorkflowID(del.RunID),
		StaticSummary: fmt.Sprintf("run of %s (group, chat message #%d)", del.AgentName, dec.Seq),
		Memo: map[string]any{"agent": del.AgentName, "run_id": del.RunID, "trigger": runs.TriggerGroup,
			"group_message_id": messageID, "group_message_seq": dec.Seq, "guild_id": dec.GuildID},
		Priority: runwf.Priority(del.OrganisationID, runs.TriggerGroup),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			runwf.SAOrganisation.ValueSet(del.OrganisationID),
			runwf.SAGuild.ValueSet(del.GuildID),
			runwf.SAAgent.ValueSet(del.AgentID),
			runwf.SATrigger.ValueSet(runs.TriggerGroup),
		),
		// Ending a routing (terminating it) asks its runs to cancel, so
		// each still records how it ended.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
	})
	var out runwf.Result
	err := workflow.ExecuteChildWorkflow(cctx, runwf.WorkflowName, runwf.Params{RunID: del.RunID, AgentID: del.AgentID,
		GuildID: del.GuildID, OrganisationID: del.OrganisationID, Trigger: runs.TriggerGroup}).Get(ctx, &out)
	if err != nil {
		done.Status = runs.StatusFailed
		if temporal.IsCanceledError(err) {
			done.Status = runs.StatusCancelled
		}
		return done
	}
	done.Status = out.Status
	actx := workflow.WithActivityOptions(ctx, withSummary(writeOptions, "post the answer of "+rcpt.Name))
	var posted groupact.AnswerOutput
	if err := workflow.ExecuteActivity(actx, groupact.AnswerName, groupact.AnswerInput{MessageID: messageID, RunID: del.RunID,
		Text: out.Text}).Get(actx, &posted); err != nil {
		workflow.GetLogger(ctx).Error("could not post a run's answer into the chat", "run_id", del.RunID, "error", err)
		return done
	}
	done.MessageID = posted.MessageID
	return done
}

func withSummary(o workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	o.Summary = summary
	return o
}
