package breaker_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/testdb"
)

// clock is a test's time, moved by hand past a cool-off.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func login(t *testing.T, db *pgxpool.Pool) string {
	t.Helper()
	var id string
	err := db.QueryRow(context.Background(), `WITH s AS (INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
		VALUES ('flaky', 'flaky', 'http', 'http://127.0.0.1:1/mcp', 'none', '{}') RETURNING id)
		INSERT INTO mcp_connections (server_id, owner_scope, status) SELECT id, 'platform', 'connected' FROM s RETURNING id`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func check(t *testing.T, b *breaker.Breaker, id string) breaker.Gate {
	t.Helper()
	g, err := b.Check(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func record(t *testing.T, b *breaker.Breaker, id string, g breaker.Gate, r breaker.Result) {
	t.Helper()
	if err := b.Record(context.Background(), id, g, r); err != nil {
		t.Fatal(err)
	}
}

// Three failures in a row pause the login; the pause refuses, then lets one
// trial through; a failed trial pauses for twice as long; an answered trial
// closes it.
func TestBreakerOpensHalfOpensAndCloses(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	id := login(t, db)
	c := &clock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 3, CoolOff: time.Minute, MaxCoolOff: 3 * time.Minute}, c.now)

	for i := 0; i < 3; i++ {
		g := check(t, b, id)
		if !g.Allowed || g.Failures != i {
			t.Fatalf("call %d: %+v", i, g)
		}
		record(t, b, id, g, breaker.Failed)
	}
	g := check(t, b, id)
	if g.Allowed || !g.Until.Equal(c.now().Add(time.Minute)) || g.Failures != 3 {
		t.Fatalf("after 3 failures: %+v", g)
	}
	if got, want := g.Refusal("flaky"), "flaky is paused after 3 failures in a row; it will be tried again at 2026-12-05T01:01:00Z"; got != want {
		t.Fatalf("refusal %q, want %q", got, want)
	}
	st, err := breaker.Get(context.Background(), db, id)
	if err != nil || st.PausedUntil == nil || !st.PausedUntil.Equal(g.Until) || st.Failures != 3 {
		t.Fatalf("state %+v %v", st, err)
	}

	c.add(time.Minute)
	trial := check(t, b, id)
	if !trial.Allowed || !trial.Trial {
		t.Fatalf("after the cool-off: %+v", trial)
	}
	if g := check(t, b, id); g.Allowed || !g.Testing || !strings.Contains(g.Refusal("flaky"), "trial call is testing it now") {
		t.Fatalf("a second call during the trial: %+v", g)
	}
	record(t, b, id, trial, breaker.Failed)
	if g := check(t, b, id); g.Allowed || !g.Until.Equal(c.now().Add(2*time.Minute)) {
		t.Fatalf("after a failed trial the pause doubles: %+v", g)
	}

	c.add(2 * time.Minute)
	trial = check(t, b, id)
	record(t, b, id, trial, breaker.Failed)
	if g := check(t, b, id); !g.Until.Equal(c.now().Add(3 * time.Minute)) {
		t.Fatalf("the pause is capped: %+v", g)
	}

	c.add(3 * time.Minute)
	trial = check(t, b, id)
	if !trial.Trial {
		t.Fatalf("trial: %+v", trial)
	}
	record(t, b, id, trial, breaker.Answered)
	if g := check(t, b, id); !g.Allowed || g.Trial || g.Failures != 0 {
		t.Fatalf("after an answered trial: %+v", g)
	}
	if st, _ := breaker.Get(context.Background(), db, id); st != (breaker.State{}) {
		t.Fatalf("closed state %+v", st)
	}
}

// An answer resets the count, so failures that are not in a row never pause;
// a neutral call (nothing sent, bad input) neither counts nor resets, and a
// neutral trial hands the trial to the next call.
func TestBreakerCountsOnlyFailuresInARow(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	id := login(t, db)
	c := &clock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 2, CoolOff: time.Minute}, c.now)

	for _, r := range []breaker.Result{breaker.Failed, breaker.Answered, breaker.Failed, breaker.Neutral} {
		record(t, b, id, check(t, b, id), r)
	}
	if g := check(t, b, id); !g.Allowed || g.Failures != 1 {
		t.Fatalf("failed, answered, failed, neutral: %+v", g)
	}
	record(t, b, id, check(t, b, id), breaker.Failed)
	if g := check(t, b, id); g.Allowed {
		t.Fatalf("two in a row should pause: %+v", g)
	}
	c.add(time.Minute)
	trial := check(t, b, id)
	record(t, b, id, trial, breaker.Neutral)
	if g := check(t, b, id); !g.Trial {
		t.Fatalf("after a neutral trial the next call is the trial: %+v", g)
	}
}

// A trial whose worker was lost holds the half-open state for the lease only.
func TestBreakerTrialLeaseExpires(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	id := login(t, db)
	c := &clock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 1, CoolOff: time.Minute, TrialLease: 5 * time.Minute}, c.now)
	record(t, b, id, check(t, b, id), breaker.Failed)
	c.add(time.Minute)
	if g := check(t, b, id); !g.Trial {
		t.Fatalf("trial: %+v", g)
	} // never recorded: its worker was lost
	if g := check(t, b, id); g.Allowed || !g.Until.Equal(c.now().Add(5*time.Minute)) {
		t.Fatalf("during the lease: %+v", g)
	}
	c.add(5 * time.Minute)
	if g := check(t, b, id); !g.Trial {
		t.Fatalf("after the lease another call is the trial: %+v", g)
	}
}

// A nil breaker (GUILDS_BREAKER_FAILURES=0) lets everything through.
func TestBreakerOff(t *testing.T) {
	t.Parallel()
	b := breaker.New(nil, breaker.Settings{Failures: -1}, nil)
	if b != nil {
		t.Fatal("a negative threshold should turn the breaker off")
	}
	g, err := b.Check(context.Background(), "any")
	if err != nil || !g.Allowed {
		t.Fatalf("%+v %v", g, err)
	}
	if err := b.Record(context.Background(), "any", g, breaker.Failed); err != nil {
		t.Fatal(err)
	}
}

// An operator's Test that closes the breaker while a trial runs wins: the
// trial's failure then counts as the first of a new row, not a doubled pause.
func TestBreakerResetDuringTrial(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	id := login(t, db)
	c := &clock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 2, CoolOff: time.Minute}, c.now)
	for i := 0; i < 2; i++ {
		record(t, b, id, check(t, b, id), breaker.Failed)
	}
	c.add(time.Minute)
	trial := check(t, b, id)
	if err := breaker.Reset(context.Background(), db, id); err != nil {
		t.Fatal(err)
	}
	record(t, b, id, trial, breaker.Failed)
	g := check(t, b, id)
	if !g.Allowed || g.Failures != 1 {
		t.Fatalf("after a reset and a failed trial: %+v", g)
	}
	if got := (breaker.Gate{Failures: 1, Until: c.now()}).Refusal("flaky"); !strings.Contains(got, "after 1 failure in a row") {
		t.Fatalf("refusal %q", got)
	}
}
