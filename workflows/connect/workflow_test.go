package connect

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/google/uuid"
	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/testdb"
)

const (
	testConn     = "6f1c1f0e-2b1a-4d55-9a53-1f0c7f9d2a10"
	testRedirect = "https://guilds.example/api/mcp/oauth/callback"
	testAuthURL  = "https://as.example/authorize?state=s&code_challenge=c&code_challenge_method=S256"
)

// wfEnv is one workflow under the test suite, with every activity it started
// and the arguments it was given.
type wfEnv struct {
	*testsuite.TestWorkflowEnvironment
	mu      sync.Mutex
	started []string
	args    map[string][]any
}

// newWFEnv registers the activities with a (possibly nil) database: mocked
// activities never touch it, unmocked ones (Abandon) run for real.
func newWFEnv(t *testing.T, db *pgxpool.Pool) *wfEnv {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	e := &wfEnv{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment(), args: map[string][]any{}}
	Register(e, &acts.Activities{DB: db})
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.started = append(e.started, info.ActivityType.Name)
		e.args[info.ActivityType.Name] = append(e.args[info.ActivityType.Name], decodeArgs(t, info.ActivityType.Name, args))
	})
	return e
}

// decodeArgs decodes an activity's single argument into the type its
// signature declares: anything else would fail here.
func decodeArgs(t *testing.T, name string, args converter.EncodedValues) any {
	var v any
	switch name {
	case acts.PrepareName:
		v = new(acts.PrepareInput)
	case acts.ExchangeName:
		v = new(acts.ExchangeInput)
	default: // Finish, Abandon: the connection id
		v = new(string)
	}
	if err := args.Get(v); err != nil {
		t.Errorf("%s arguments: %v", name, err)
	}
	return reflect.ValueOf(v).Elem().Interface()
}

func (e *wfEnv) calls(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.started {
		if s == name {
			n++
		}
	}
	return n
}

func (e *wfEnv) sequence() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, s := range e.started {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// askURL sends the authorization_url update once the workflow has started
// and records its outcome.
func (e *wfEnv) askURL(after time.Duration) *updateResult {
	r := &updateResult{}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateAuthorizationURL, "u1", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { r.err = err; r.done = true },
			OnComplete: func(v any, err error) {
				r.done, r.err = true, err
				if s, ok := v.(string); ok {
					r.url = s
				}
			},
		})
	}, after)
	return r
}

type updateResult struct {
	done bool
	url  string
	err  error
}

func (e *wfEnv) result(t *testing.T) Result {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var r Result
	if err := e.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func in() Input {
	return Input{ConnectionID: testConn, RedirectURI: testRedirect, Deadline: 10 * time.Minute}
}

func TestWorkflowConnects(t *testing.T) {
	e := newWFEnv(t, nil)
	sealed := []byte("sealed-callback-bytes")
	e.OnActivity(acts.PrepareName, mock.Anything, acts.PrepareInput{ConnectionID: testConn, RedirectURI: testRedirect, KeepURL: true}).Return(testAuthURL, nil).Once()
	e.OnActivity(acts.ExchangeName, mock.Anything, acts.ExchangeInput{ConnectionID: testConn, Sealed: sealed}).Return(nil).Once()
	e.OnActivity(acts.FinishName, mock.Anything, testConn).Return(acts.FinishResult{AccountHint: "acme.test", Tools: 2}, nil).Once()

	upd := e.askURL(0)
	var queried string
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryAuthorizationURL)
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		_ = v.Get(&queried)
		e.SignalWorkflow(SignalCallback, Callback{Sealed: sealed})
	}, time.Minute)
	e.ExecuteWorkflow(WorkflowName, in())

	if r := e.result(t); r != (Result{Status: StatusConnected, AccountHint: "acme.test", Tools: 2}) {
		t.Fatalf("result %+v", r)
	}
	if !upd.done || upd.err != nil || upd.url != testAuthURL {
		t.Fatalf("update: %+v", upd)
	}
	if queried != testAuthURL {
		t.Fatalf("query answered %q", queried)
	}
	if got := e.sequence(); !reflect.DeepEqual(got, []string{acts.PrepareName, acts.ExchangeName, acts.FinishName}) {
		t.Fatalf("activities %v", got)
	}
	e.AssertExpectations(t)
	e.assertOnlyIDsCross(t, sealed)
}

// assertOnlyIDsCross: every activity got the connection id, the redirect URI
// or the sealed callback, nothing else.
func (e *wfEnv) assertOnlyIDsCross(t *testing.T, sealed []byte) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, list := range e.args {
		for _, v := range list {
			switch v := v.(type) {
			case acts.PrepareInput:
				if v != (acts.PrepareInput{ConnectionID: testConn, RedirectURI: testRedirect, KeepURL: true}) {
					t.Errorf("%s got %+v", name, v)
				}
			case acts.ExchangeInput:
				if v.ConnectionID != testConn || string(v.Sealed) != string(sealed) {
					t.Errorf("%s got %+v", name, v)
				}
			case string:
				if v != testConn {
					t.Errorf("%s got %q", name, v)
				}
			default:
				t.Errorf("%s got a %T", name, v)
			}
		}
	}
}

// The query answers "" until Prepare returned, and the URL afterwards.
func TestWorkflowQueryBeforeAndAfterPrepare(t *testing.T) {
	e := newWFEnv(t, nil)
	e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).After(time.Minute).Return(testAuthURL, nil)
	e.OnActivity(acts.AbandonName, mock.Anything, testConn).Return(nil)
	var before, after string
	e.RegisterDelayedCallback(func() {
		v, _ := e.QueryWorkflow(QueryAuthorizationURL)
		_ = v.Get(&before)
	}, time.Second)
	e.RegisterDelayedCallback(func() {
		v, _ := e.QueryWorkflow(QueryAuthorizationURL)
		_ = v.Get(&after)
	}, 2*time.Minute)
	e.ExecuteWorkflow(WorkflowName, in())
	if before != "" || after != testAuthURL {
		t.Fatalf("query before %q, after %q", before, after)
	}
	if r := e.result(t); r.Status != StatusExpired {
		t.Fatalf("result %+v", r)
	}
}

func TestWorkflowSetupFailureAnswersTheUpdate(t *testing.T) {
	e := newWFEnv(t, nil)
	e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).
		Return("", temporal.NewNonRetryableApplicationError("OAuth setup failed: no metadata", acts.ErrTypeSetup, nil)).Once()
	e.OnActivity(acts.AbandonName, mock.Anything, testConn).Return(nil).Once()
	upd := e.askURL(0)
	e.ExecuteWorkflow(WorkflowName, in())

	r := e.result(t)
	if r.Status != StatusFailed || r.Error != "OAuth setup failed: no metadata" {
		t.Fatalf("result %+v", r)
	}
	var ae *temporal.ApplicationError
	if !upd.done || !errors.As(upd.err, &ae) || ae.Type() != acts.ErrTypeSetup || ae.Message() != "OAuth setup failed: no metadata" {
		t.Fatalf("update: %+v", upd)
	}
	if e.calls(acts.PrepareName) != 1 || e.calls(acts.ExchangeName) != 0 || e.calls(acts.AbandonName) != 1 {
		t.Fatalf("activities %v", e.sequence())
	}
}

// Denied, empty and late callbacks, and a refused exchange, all abandon; the
// result never carries more than a fixed message and the provider's code.
func TestWorkflowAbandons(t *testing.T) {
	for _, tc := range []struct {
		name     string
		signal   *Callback // nil: none before the deadline
		exchange error
		status   Outcome
		message  string
	}{
		{"denied", &Callback{Error: "access_denied"}, nil, StatusDenied, "the provider refused the login (access_denied"},
		{"no parameters", &Callback{}, nil, StatusDenied, "the provider sent the browser back without an authorization code"},
		{"deadline", nil, nil, StatusExpired, "no callback arrived before the login expired"},
		{"exchange refused", &Callback{Sealed: []byte("x")},
			temporal.NewNonRetryableApplicationError("connection notion: the provider refused the login (invalid_grant)", acts.ErrTypeRefused, nil),
			StatusFailed, "connection notion: the provider refused the login (invalid_grant)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newWFEnv(t, nil)
			e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
			e.OnActivity(acts.ExchangeName, mock.Anything, mock.Anything).Return(tc.exchange)
			e.OnActivity(acts.AbandonName, mock.Anything, testConn).Return(nil).Once()
			if tc.signal != nil {
				e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalCallback, *tc.signal) }, time.Minute)
			}
			e.ExecuteWorkflow(WorkflowName, in())
			r := e.result(t)
			if r.Status != tc.status || !strings.HasPrefix(r.Error, tc.message) {
				t.Fatalf("result %+v", r)
			}
			exchanges := 0
			if tc.signal != nil && len(tc.signal.Sealed) > 0 {
				exchanges = 1
			}
			if e.calls(acts.AbandonName) != 1 || e.calls(acts.FinishName) != 0 || e.calls(acts.ExchangeName) != exchanges {
				t.Fatalf("activities %v", e.sequence())
			}
		})
	}
}

// The deadline is the one the caller gave (or the default): a callback one
// second before it still completes the login.
func TestWorkflowDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		signalAt time.Duration
		status   Outcome
	}{
		{"just in time", 5 * time.Minute, 5*time.Minute - time.Second, StatusConnected},
		{"too late", 5 * time.Minute, 5*time.Minute + time.Second, StatusExpired},
		{"default in time", 0, DefaultDeadline - time.Second, StatusConnected},
		{"default too late", 0, DefaultDeadline + time.Second, StatusExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newWFEnv(t, nil)
			e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
			e.OnActivity(acts.ExchangeName, mock.Anything, mock.Anything).Return(nil)
			e.OnActivity(acts.FinishName, mock.Anything, mock.Anything).Return(acts.FinishResult{}, nil)
			e.OnActivity(acts.AbandonName, mock.Anything, mock.Anything).Return(nil)
			e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalCallback, Callback{Sealed: []byte("x")}) }, tc.signalAt)
			e.ExecuteWorkflow(WorkflowName, Input{ConnectionID: testConn, RedirectURI: testRedirect, Deadline: tc.deadline})
			if r := e.result(t); r.Status != tc.status {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

// The exchange consumes the single-use state first, so it runs exactly once
// even when it fails in a way Temporal would normally retry; Finish and
// Abandon are idempotent and retried.
func TestWorkflowRetries(t *testing.T) {
	if exchangeOptions.RetryPolicy == nil || exchangeOptions.RetryPolicy.MaximumAttempts != 1 {
		t.Fatalf("exchange retry policy %+v: the exchange must never be retried", exchangeOptions.RetryPolicy)
	}
	for name, o := range map[string]struct {
		opts     time.Duration
		attempts int32
	}{
		"prepare": {prepareOptions.StartToCloseTimeout, prepareOptions.RetryPolicy.MaximumAttempts},
		"finish":  {finishOptions.StartToCloseTimeout, finishOptions.RetryPolicy.MaximumAttempts},
		"cleanup": {cleanupOptions.StartToCloseTimeout, cleanupOptions.RetryPolicy.MaximumAttempts},
	} {
		if o.opts <= 0 || o.attempts == 1 {
			t.Errorf("%s options: timeout %v, attempts %d", name, o.opts, o.attempts)
		}
	}

	t.Run("exchange fails once", func(t *testing.T) {
		e := newWFEnv(t, nil)
		e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
		e.OnActivity(acts.ExchangeName, mock.Anything, mock.Anything).Return(func(ctx context.Context, _ acts.ExchangeInput) error {
			if info := activity.GetInfo(ctx); info.StartToCloseTimeout != exchangeOptions.StartToCloseTimeout {
				t.Errorf("exchange timeout %v", info.StartToCloseTimeout)
			}
			return errors.New("connection reset by peer")
		})
		e.OnActivity(acts.AbandonName, mock.Anything, mock.Anything).Return(nil)
		e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalCallback, Callback{Sealed: []byte("x")}) }, time.Minute)
		e.ExecuteWorkflow(WorkflowName, in())
		if r := e.result(t); r.Status != StatusFailed {
			t.Fatalf("result %+v", r)
		}
		if n := e.calls(acts.ExchangeName); n != 1 {
			t.Fatalf("exchange ran %d times", n)
		}
	})

	t.Run("finish and abandon retried", func(t *testing.T) {
		e := newWFEnv(t, nil)
		e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
		e.OnActivity(acts.ExchangeName, mock.Anything, mock.Anything).Return(nil)
		e.OnActivity(acts.FinishName, mock.Anything, mock.Anything).Return(acts.FinishResult{}, errors.New("deadlock detected")).Once()
		e.OnActivity(acts.FinishName, mock.Anything, mock.Anything).Return(acts.FinishResult{Tools: -1}, nil).Once()
		e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalCallback, Callback{Sealed: []byte("x")}) }, time.Minute)
		e.ExecuteWorkflow(WorkflowName, in())
		if r := e.result(t); r.Status != StatusConnected || r.Tools != -1 || e.calls(acts.FinishName) != 2 {
			t.Fatalf("result %+v after %d finishes", r, e.calls(acts.FinishName))
		}

		e = newWFEnv(t, nil)
		e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
		e.OnActivity(acts.AbandonName, mock.Anything, mock.Anything).Return(errors.New("connection refused")).Twice()
		e.OnActivity(acts.AbandonName, mock.Anything, mock.Anything).Return(nil).Once()
		e.ExecuteWorkflow(WorkflowName, in())
		if r := e.result(t); r.Status != StatusExpired || e.calls(acts.AbandonName) != 3 {
			t.Fatalf("result %+v after %d abandons", r, e.calls(acts.AbandonName))
		}
	})
}

// Abandon, run for real: a denied or expired NEW login loses its row and its
// pending state; a retry over a disconnected login keeps the row and its
// binding and only loses the pending state.
func TestWorkflowAbandonOnPostgres(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	var serverID string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth) VALUES ('notion', 'Notion', 'http', 'https://mcp.notion.example/mcp', 'oauth') RETURNING id`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	login := func(status string) string {
		id := connectionstest.InsertAs(t, db, serverID, "organisation", uuid.NewString(), connstore.Status(status))
		if _, err := db.Exec(ctx, `INSERT INTO connection_oauth_pending (state_hash, connection_id, redirect_uri, key_id, verifier, expires_at)
VALUES (gen_random_uuid()::text::bytea, $1, $2, 'k1', '\x00', now() + interval '15 minutes')`, id, testRedirect); err != nil {
			t.Fatal(err)
		}
		return id
	}
	count := func(q, id string) int {
		var n int
		if err := db.QueryRow(ctx, q, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		status string // of the login before the retry
		signal *Callback
	}{
		{"new login denied", "pending", &Callback{Error: "access_denied"}},
		{"new login expired", "pending", nil},
		{"disconnected login denied", "disconnected", &Callback{Error: "access_denied"}},
		{"disconnected login expired", "disconnected", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := login(tc.status)
			if _, err := db.Exec(ctx, `INSERT INTO bindings (scope, catalog_kind, catalog_id, server_id, enabled, connection_id)
VALUES ('platform', 'mcp', $1, $2, true, $3)`, "notion-"+id, serverID, id); err != nil {
				t.Fatal(err)
			}
			e := newWFEnv(t, db)
			e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(testAuthURL, nil)
			if tc.signal != nil {
				e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalCallback, *tc.signal) }, time.Minute)
			}
			e.ExecuteWorkflow(WorkflowName, Input{ConnectionID: id, RedirectURI: testRedirect})
			r := e.result(t)
			if (tc.signal == nil) != (r.Status == StatusExpired) || e.calls(acts.AbandonName) != 1 {
				t.Fatalf("result %+v, activities %v", r, e.sequence())
			}
			if n := count(`SELECT count(*) FROM connection_oauth_pending WHERE connection_id = $1`, id); n != 0 {
				t.Fatalf("%d pending logins left", n)
			}
			rows := 0
			if connectionstest.Exists(t, db, id) {
				rows = 1
			}
			bindings := count(`SELECT count(*) FROM bindings WHERE connection_id = $1`, id)
			if tc.status == "pending" && (rows != 0 || bindings != 0) {
				t.Fatalf("a new login must be deleted: %d rows, %d bindings", rows, bindings)
			}
			if tc.status == "disconnected" {
				status := connectionstest.StatusOr(t, db, id, "")
				if rows != 1 || bindings != 1 || status != "disconnected" {
					t.Fatalf("a disconnected login must stay: %d rows (%s), %d bindings", rows, status, bindings)
				}
			}
		})
	}
}
