package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/run"
)

// runStep is a step of a live run that Temporal holds open: a model turn or
// a tool call being tried, as the Temporal UI shows its pending activity.
type runStep struct {
	// Step names what the activity does: "model turn", "tool call"…
	Step     string `json:"step"`
	Activity string `json:"activity"`
	// State is scheduled (waiting for a worker or its next try), started or cancel_requested.
	State           string     `json:"state"`
	Attempt         int        `json:"attempt"`
	MaximumAttempts int        `json:"maximum_attempts,omitempty"` // 0: unlimited
	LastFailure     string     `json:"last_failure,omitempty"`     // redacted, at most failureChars
	NextAttemptAt   *time.Time `json:"next_attempt_at,omitempty"`
	LastStartedAt   *time.Time `json:"last_started_at,omitempty"`
	// Progress and Total: what a long remote call last reported.
	Progress *float64 `json:"progress,omitempty"`
	Total    *float64 `json:"total,omitempty"`
}

type runSteps struct {
	Steps []runStep `json:"steps"`
}

const failureChars = 300

// Tokens a failure message might quote: an Authorization header's value or
// a provider key's usual shapes. Infrastructure addresses go through config.Redact.
var quotedCredential = regexp.MustCompile(`(?i)(bearer\s+|api[_-]?key[=:\s"]+|\bsk-)[A-Za-z0-9._~+/=-]{6,}`)

func redactFailure(msg string) string {
	msg = quotedCredential.ReplaceAllString(config.Redact(msg), "${1}***")
	if r := []rune(msg); len(r) > failureChars {
		msg = string(r[:failureChars]) + "…"
	}
	return msg
}

var stepNames = map[string]string{
	runact.ModelName: "model turn", runact.ToolName: "tool call", runact.ToolLocalName: "tool call",
	runact.ToolRecordName: "recording a call", runact.SnapshotName: "preparing the run", runact.FinishName: "finishing the run",
	runact.TaskPollName: "waiting on a server's task", runact.TaskCancelName: "cancelling a server's task",
	runact.ApprovalAskName: "asking for an approval", runact.ApprovalSettleName: "settling an approval",
}

// runActivity reads the run's workflow from Temporal: what it is trying now,
// with attempt, last failure and next try (a model that does not answer is
// retried, and the run page shows it rather than a bare "running").
func (s *Server) runActivity(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out := runSteps{Steps: []runStep{}}
	if runs.Final(r.Status) {
		return http.StatusOK, out, nil
	}
	if s.Temporal == nil {
		return 0, nil, errNoTemporal()
	}
	desc, err := s.Temporal.DescribeWorkflow(ctx, run.WorkflowID(r.ID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return http.StatusOK, out, nil
	}
	if err != nil {
		return 0, nil, err
	}
	dc := converter.GetDefaultDataConverter()
	if s.Codec != nil {
		dc = converter.NewCodecDataConverter(dc, s.Codec)
	}
	fc := temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc})
	pending := desc.RawResponse.GetPendingActivities()
	// Activity ids are the workflow's schedule order, so a turn's calls list in seq order.
	sort.SliceStable(pending, func(i, j int) bool {
		a, _ := strconv.Atoi(pending[i].GetActivityId())
		b, _ := strconv.Atoi(pending[j].GetActivityId())
		return a < b
	})
	for _, pa := range pending {
		name := pa.GetActivityType().GetName()
		st := runStep{Activity: name, Step: stepNames[name], Attempt: int(pa.GetAttempt()),
			MaximumAttempts: int(pa.GetMaximumAttempts()), State: stepState(pa.GetState().String())}
		if st.Step == "" {
			st.Step = name
		}
		if f := pa.GetLastFailure(); f != nil {
			st.LastFailure = redactFailure(failureText(fc.FailureToError(f)))
		}
		if t := pa.GetNextAttemptScheduleTime(); t != nil {
			at := t.AsTime()
			st.NextAttemptAt = &at
		}
		if t := pa.GetLastStartedTime(); t != nil {
			at := t.AsTime()
			st.LastStartedAt = &at
		}
		if hb := pa.GetHeartbeatDetails(); hb != nil && len(hb.GetPayloads()) > 0 {
			var prog runact.CallProgress
			if dc.FromPayloads(hb, &prog) == nil && (prog.Progress > 0 || prog.Total > 0) {
				st.Progress = &prog.Progress
				if prog.Total > 0 {
					st.Total = &prog.Total
				}
			}
		}
		out.Steps = append(out.Steps, st)
	}
	return http.StatusOK, out, nil
}

// failureText is an activity's error as it was raised, without the SDK's
// "(type: …, retryable: …)" suffix.
func failureText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Message() != "" {
		return app.Message()
	}
	return err.Error()
}

func stepState(s string) string {
	switch s {
	case "PENDING_ACTIVITY_STATE_STARTED":
		return "started"
	case "PENDING_ACTIVITY_STATE_CANCEL_REQUESTED":
		return "cancel_requested"
	}
	return "scheduled"
}
