package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// guard bounds every wait so a broken listener fails the test instead of
// hanging it; nothing here depends on how fast a wake arrives.
const guard = 30 * time.Second

func newRun(t testing.TB, db *pgxpool.Pool) runs.Run {
	t.Helper()
	ctx := context.Background()
	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme-'||gen_random_uuid()) RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'Ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1, 'Scribe-'||gen_random_uuid()) RETURNING id`, guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 10, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func startListener(t *testing.T, db *pgxpool.Pool) *runs.Listener {
	t.Helper()
	l := runs.NewListener(db.Config().ConnConfig.Copy(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitListening(t, l)
	return l
}

func waitListening(t *testing.T, l *runs.Listener) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !l.Listening() {
		if time.Now().After(deadline) {
			t.Fatal("the listener never started listening")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("no wake after %s", what)
	}
}

func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// A new message and a status change wake the run's followers, through the
// triggers of migration 008; another run's changes do not.
func TestListenerWakesTheRunsFollowers(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	l := startListener(t, db)
	a, b := newRun(t, db), newRun(t, db)
	wakeA, stopA := l.Subscribe(a.ID)
	defer stopA()
	wakeB, stopB := l.Subscribe(b.ID)
	defer stopB()
	drain(wakeA)
	drain(wakeB)

	if _, err := runs.AppendMessage(ctx, db, runs.Message{RunID: b.ID, Seq: 2, Role: runs.RoleAssistant, Content: "on it"}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wakeB, "a message of run b")
	// Notifications arrive in commit order on one connection: b's has been
	// handled, and a had none.
	select {
	case <-wakeA:
		t.Fatal("run a was woken by run b's message")
	default:
	}

	if err := runs.MarkRunning(ctx, db, a.ID); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wakeA, "run a's status change")
}

// When the listening connection dies, followers are told to re-read (what
// was notified meanwhile is lost) and the listener comes back by itself.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	l := startListener(t, db)
	r := newRun(t, db)
	wake, stop := l.Subscribe(r.ID)
	defer stop()
	drain(wake)

	tag, err := db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+runs.EventsChannel+`'`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminate the listener's backend: %v (%d rows)", err, tag.RowsAffected())
	}
	waitWake(t, wake, "the reconnection")
	waitListening(t, l)
	drain(wake)
	if err := runs.Finish(ctx, db, r.ID, "completed", ""); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "a status change after the reconnection")
}

// Follow with a listener streams every message and the final status, then
// returns.
func TestFollowWithListener(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	l := startListener(t, db)
	r := newRun(t, db)
	events := make(chan runs.Event, 16)
	done := make(chan error, 1)
	go func() {
		done <- runs.Follow(ctx, db, r.ID, 0, l, func(ev runs.Event) error { events <- ev; return nil })
	}()
	next := func() runs.Event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(guard):
			t.Fatal("no event")
		}
		return runs.Event{}
	}
	if ev := next(); ev.Type != "message" || ev.Message.Seq != 1 {
		t.Fatalf("first event %+v", ev)
	}
	if ev := next(); ev.Type != "status" || ev.Run.Status != "queued" {
		t.Fatalf("second event %+v", ev)
	}
	if _, err := runs.AppendMessage(ctx, db, runs.Message{RunID: r.ID, Seq: 2, Role: runs.RoleAssistant, Content: "done"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Type != "message" || ev.Message.Seq != 2 {
		t.Fatalf("third event %+v", ev)
	}
	if err := runs.Finish(ctx, db, r.ID, "completed", ""); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Type != "status" || ev.Run.Status != "completed" {
		t.Fatalf("fourth event %+v", ev)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(guard):
		t.Fatal("Follow did not return after the final status")
	}
}
