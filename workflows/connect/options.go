package connect

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

var (
	// prepareOptions: discovery, registration and the pending login. Remote
	// metadata calls are bounded at 15 s each; transient failures retry a
	// few times while the API waits for the URL.
	prepareOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	}
	// exchangeOptions: one attempt, because the exchange consumes the
	// single-use state first; a retry could only see it gone.
	exchangeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
	// finishOptions: binding, account hint and the first listing (15 s);
	// idempotent, so retried.
	finishOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	}
	// cleanupOptions: deleting a pending login is idempotent; retried until done.
	cleanupOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	}
)
