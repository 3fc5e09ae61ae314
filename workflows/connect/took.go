package connect

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// TookState is what a login's workflow tells of the callback it took: the
// digest of its state (none before a callback arrived, or for a login
// recorded before digests were sent), and until when a repeat of that
// callback may still be answered with the login's outcome: the login's own
// deadline, the life of the state and of the starting browser's cookie.
type TookState struct {
	StateDigest []byte    `json:",omitempty"`
	Until       time.Time `json:",omitzero"`
}

// Matches reports whether the login took the callback of the state with
// this digest, and the repeat comes before Until.
func (t TookState) Matches(digest []byte, now time.Time) bool {
	return len(t.StateDigest) > 0 && subtle.ConstantTimeCompare(t.StateDigest, digest) == 1 && now.Before(t.Until)
}

// Took reports whether the connection's current login took the callback of
// the state with this digest, and names that login's run, whose outcome
// WaitRun reads. No login, a login that took another state, or one started
// by a worker too old to answer the query: false, without error.
func Took(ctx context.Context, c client.Client, connectionID string, digest []byte) (runID string, ok bool, err error) {
	d, err := c.DescribeWorkflow(ctx, ID(connectionID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	runID = d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	v, err := c.QueryWorkflow(ctx, ID(connectionID), runID, QueryTookState)
	var qf *serviceerror.QueryFailed
	if errors.As(err, &nf) || errors.As(err, &qf) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var t TookState
	if err := v.Get(&t); err != nil {
		return "", false, err
	}
	return runID, t.Matches(digest, time.Now()), nil
}

// WaitRun returns the outcome of one run of the connection's login.
func WaitRun(ctx context.Context, c client.Client, connectionID, runID string) (Result, error) {
	var res Result
	err := c.GetWorkflow(ctx, ID(connectionID), runID).Get(ctx, &res)
	return res, err
}
