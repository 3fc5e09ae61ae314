package run

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/tools"
)

// snapshotOptions: resolving the offer reads Postgres and the stored MCP
// catalog only, so it is short. A run row not yet committed by the request
// that started it shows up as a retry within a second.
var snapshotOptions = workflow.ActivityOptions{
	Summary: "snapshot: resolve what the run offers",
	// Postgres reads plus a few MCP catalog checks.
	StartToCloseTimeout: time.Minute,
	// It heartbeats: a worker lost at run start (the load harness's kill
	// variant lost one) costs this, not the minute.
	HeartbeatTimeout: modelHeartbeatTimeout,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    200 * time.Millisecond, // the request's transaction commits within ms
		BackoffCoefficient: 2,
		MaximumInterval:    10 * time.Second,
		MaximumAttempts:    8, // about a minute, then the run fails
	},
}

// modelOptions: one provider request. The activity is idempotent on
// (run, seq), so rate limits (429) and provider errors (5xx) are retried
// with backoff; a refused request (4xx) is a non-retryable error. It
// heartbeats while it waits on the provider, so a turn whose worker is lost
// is retried after modelHeartbeatTimeout, not after the whole 3 minutes.
var modelOptions = workflow.ActivityOptions{
	// A long completion with big tool schemas can take a couple of minutes.
	StartToCloseTimeout: 3 * time.Minute,
	HeartbeatTimeout:    modelHeartbeatTimeout,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute, // rate limits are usually per minute
		MaximumAttempts:    8,
	},
}

// modelHeartbeatTimeout: the model activity heartbeats every couple of
// seconds (runact.Deps.Heartbeat); the SDK sends at most one heartbeat per
// 80 % of this timeout, so a loaded server has 4 s to take each one. Longer
// than the tools' 10 s because a wrongly declared loss here repeats a
// provider request, which costs money.
const modelHeartbeatTimeout = 20 * time.Second

// bookkeepingOptions: tool_record and finish write one or two rows and are
// idempotent, so they retry freely.
var bookkeepingOptions = workflow.ActivityOptions{
	// A handful of statements.
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    500 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
		MaximumAttempts:    20,
	},
}

// classTimeouts is the StartToCloseTimeout of a tool call by timeout class.
// Code tools take the helper's own timeout for the call (see codeTimeout).
var classTimeouts = map[tools.Class]time.Duration{
	tools.ClassDefault: 30 * time.Second,
	tools.ClassBrowser: 60 * time.Second,
	// A row may raise its calls' bound to 300 s, and hold a call up to
	// 30 minutes more while a person answers its server's form (ADR 0515).
	tools.ClassMCP:     (catalog.MaxCallTimeoutSeconds+catalog.MaxInputWaitSeconds)*time.Second + poolMargin,
	tools.ClassCode:    code.GraphTimeout + codeMargin, // a first graph build of a large repository
	tools.ClassShell:   code.ShellMax + codeMargin,
	tools.ClassAdapter: adapters.MaxToolTimeout + poolMargin, // a tool's own timeout (Qonto upload_invoice) at most
	tools.ClassScript:  120 * time.Second,
}

// poolMargin: a remote tool's activity outlives the session pool's own
// timeout (90 s for tools/call, or the catalog row's own up to 300 s; for an adapter's call 30 s, or the tool's
// own timeout up to adapters.MaxToolTimeout, 90 s), so a
// server that never answers ends as the pool's ERROR result naming that
// timeout, stored by the activity, rather than as a timed-out activity. The
// margin covers resolving the login and recording the result.
const poolMargin = 15 * time.Second

// codeMargin: a code tool's activity outlives the helper's own timeout (a
// shell call's timeout_seconds plus the time to stop it and report, 60 s for
// text and syntax search, 11 minutes for the graph), so a command past its
// timeout ends as its exit_code: 124 result, not as a lost activity. The
// margin covers starting the agent's sandbox and recording the result.
const codeMargin = 30 * time.Second

// toolHeartbeatTimeout: a tool activity heartbeats every couple of seconds
// while it runs, so a worker that dies mid-call is noticed after this long
// rather than after the call's whole timeout.
const toolHeartbeatTimeout = 10 * time.Second

// toolOptions are the options of one call. A tool not declared idempotent
// runs at most once: its call may have had side effects, so a lost or failed
// attempt is recorded as interrupted instead of being repeated.
func toolOptions(class tools.Class, idempotent bool, name, args string) workflow.ActivityOptions {
	timeout, ok := classTimeouts[class]
	if d, isCode := codeTimeout(class, name, args); isCode {
		timeout, ok = d, true
	}
	if !ok {
		timeout = classTimeouts[tools.ClassDefault]
	}
	attempts := int32(1)
	if idempotent {
		attempts = 3
	}
	return workflow.ActivityOptions{
		Summary:             "tool " + name,
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    toolHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    attempts,
		},
	}
}

// quickToolTimeout bounds one attempt of a quick tool's local activity: a
// handful of Postgres statements. A local activity holds its workflow task
// open (the SDK heartbeats it), so it is kept far below the regular classes.
const quickToolTimeout = 10 * time.Second

// quickToolOptions are the options of a quick call on the fast path. Every
// quick tool is idempotent and the tool activity returns the row stored at
// (run, seq), so it retries like an idempotent call on the activity path.
func quickToolOptions(name string) workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		Summary:             "tool " + name,
		StartToCloseTimeout: quickToolTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    3,
		},
	}
}

// codeTimeout is the activity timeout of a code tool's call: the helper's
// timeout for these arguments plus codeMargin. It runs in workflow code and
// only reads the arguments, which are in the history.
func codeTimeout(class tools.Class, name, args string) (time.Duration, bool) {
	if class != tools.ClassCode && class != tools.ClassShell {
		return 0, false
	}
	d, ok := code.ExecTimeout(name, json.RawMessage(args))
	return d + codeMargin, ok
}

// Continue-as-new thresholds: a run hands over to a fresh execution, carrying
// only ids and counters, before its history gets heavy.
const (
	maxTurnsPerExecution  = 25
	maxHistoryEvents      = 4000
	maxHistoryBytesBefore = 20 << 20
)
