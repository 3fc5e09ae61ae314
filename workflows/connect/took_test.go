package connect

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	acts "github.com/guilds/guilds/activities/connect"
)

// The login tells the digest of the state whose callback it took, and until
// when a repeat of it may be answered: nothing before the callback.
func TestWorkflowTellsTheStateItTook(t *testing.T) {
	e := newWFEnv(t, nil)
	e.OnActivity(acts.PrepareName, mock.Anything, mock.Anything).Return(acts.PendingURLMarker, nil)
	e.OnActivity(acts.ExchangeName, mock.Anything, mock.Anything).Return(nil)
	e.OnActivity(acts.FinishName, mock.Anything, testConn).Return(acts.FinishResult{Tools: 1}, nil)
	digest := sha256.Sum256([]byte("the-state"))
	start := e.Now()
	query := func() TookState {
		v, err := e.QueryWorkflow(QueryTookState)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		var took TookState
		if err := v.Get(&took); err != nil {
			t.Fatal(err)
		}
		return took
	}
	var before TookState
	e.RegisterDelayedCallback(func() {
		before = query()
		e.SignalWorkflow(SignalCallback, Callback{Sealed: []byte("sealed"), StateDigest: digest[:]})
	}, time.Minute)
	e.ExecuteWorkflow(WorkflowName, in())
	if r := e.result(t); r.Status != StatusConnected {
		t.Fatalf("result %+v", r)
	}
	if before.StateDigest != nil || !before.Until.IsZero() {
		t.Fatalf("before the callback the login told %+v", before)
	}
	after := query()
	if string(after.StateDigest) != string(digest[:]) || !after.Until.Equal(start.Add(in().Deadline)) {
		t.Fatalf("after the callback the login told %+v (started %v)", after, start)
	}
}

func TestTookStateMatches(t *testing.T) {
	digest := sha256.Sum256([]byte("the-state"))
	other := sha256.Sum256([]byte("another-state"))
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	took := TookState{StateDigest: digest[:], Until: now.Add(time.Minute)}
	for _, c := range []struct {
		name   string
		took   TookState
		digest []byte
		at     time.Time
		want   bool
	}{
		{"the same state in time", took, digest[:], now, true},
		{"another state", took, other[:], now, false},
		{"the same state too late", took, digest[:], now.Add(time.Minute), false},
		{"no callback taken", TookState{}, digest[:], now, false},
		{"an empty digest", took, nil, now, false},
	} {
		if got := c.took.Matches(c.digest, c.at); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
