package inputs_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

type world struct {
	db                       *pgxpool.Pool
	org, other, guild, agent string
	run, user                string
}

func newWorld(t *testing.T) world { return newWorldB(t) }

func newWorldB(t testing.TB) world {
	t.Helper()
	ctx := context.Background()
	w := world{db: testdb.New(t)}
	q := func(sql string, dst *string, args ...any) {
		t.Helper()
		if err := w.db.QueryRow(ctx, sql, args...).Scan(dst); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	q(`INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id`, &w.org)
	q(`INSERT INTO organisations (name, slug) VALUES ('other', 'other') RETURNING id`, &w.other)
	q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, &w.guild, w.org)
	q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'payer') RETURNING id`, &w.agent, w.guild)
	q(`INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 5, 5) RETURNING id`, &w.run, w.agent, w.guild, w.org)
	q(`INSERT INTO users (name, email) VALUES ('Ann', 'ann@example.com') RETURNING id`, &w.user)
	return w
}

func (w world) at(seq int) inputs.Request { return w.atB(seq) }

func (w world) atB(seq int) inputs.Request {
	return inputs.Request{RunID: w.run, Seq: seq, OrganisationID: w.org, GuildID: w.guild, AgentID: w.agent,
		Tool: "shop_order", Server: "shop", ExpiresAt: time.Now().Add(time.Hour)}
}

var form = inputs.Form{Mode: inputs.ModeForm, Message: "How many?", Schema: json.RawMessage(
	`{"type":"object","required":["copies"],"properties":{"copies":{"type":"integer","minimum":1}}}`)}

func TestARetriedCallAsksOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a, err := inputs.Ask(ctx, w.db, w.at(2), form)
	if err != nil {
		t.Fatal(err)
	}
	b, err := inputs.Ask(ctx, w.db, w.at(2), form)
	if err != nil || b.ID != a.ID {
		t.Fatalf("asked again: %v, %v (want %s)", b.ID, err, a.ID)
	}
	other := form
	other.Message = "How many now?"
	if c, err := inputs.Ask(ctx, w.db, w.at(2), other); err != nil || c.ID == a.ID {
		t.Fatalf("another form of the call: %v, %v", c.ID, err)
	}
}

// An answer wakes the waiting call at once; the content is handed over once
// and then gone from the table.
func TestAnAnswerWakesTheWaitAndIsTakenOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r, err := inputs.Ask(ctx, w.db, w.at(1), form)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan inputs.Request, 1)
	go func() {
		out, err := inputs.Wait(ctx, w.db, r.ID, time.Now().Add(time.Minute))
		if err != nil {
			t.Error(err)
		}
		got <- out
	}()
	// A bad answer is refused and changes nothing.
	if _, err := inputs.Respond(ctx, w.db, r.ID, []string{w.org}, inputs.Reply{Answer: inputs.Answer{
		Action: inputs.ActionAccept, Content: map[string]any{"copies": 0.0}}}); !errors.Is(err, inputs.ErrInvalidAnswer) {
		t.Fatalf("an answer below the minimum: %v", err)
	}
	// Another organisation cannot see it.
	if _, err := inputs.Respond(ctx, w.db, r.ID, []string{w.other}, inputs.Reply{Answer: inputs.Answer{
		Action: inputs.ActionDecline}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another organisation's answer: %v", err)
	}
	if _, err := inputs.Respond(ctx, w.db, r.ID, []string{w.org}, inputs.Reply{UserID: w.user, UserName: "Ann",
		Answer: inputs.Answer{Action: inputs.ActionAccept, Content: map[string]any{"copies": 3.0}}}); err != nil {
		t.Fatal(err)
	}
	var done inputs.Request
	select {
	case done = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not wake on the answer")
	}
	if done.State != inputs.StateAccepted || done.AnsweredByName != "Ann" {
		t.Fatalf("woke with %+v", done)
	}
	content, err := inputs.Take(ctx, w.db, r.ID)
	if err != nil || content["copies"] != 3.0 {
		t.Fatalf("take = %v, %v", content, err)
	}
	if again, err := inputs.Take(ctx, w.db, r.ID); err != nil || again != nil {
		t.Fatalf("taken twice: %v, %v", again, err)
	}
	if _, err := inputs.Respond(ctx, w.db, r.ID, []string{w.org}, inputs.Reply{Answer: inputs.Answer{
		Action: inputs.ActionDecline}}); !errors.Is(err, inputs.ErrAnswered) {
		t.Fatalf("a second answer: %v", err)
	}
}

// Nobody answers: the wait ends at its bound with the request expired, and a
// late answer is refused.
func TestAWaitPastItsBoundExpires(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	at := w.at(1)
	at.ExpiresAt = time.Now().Add(200 * time.Millisecond)
	r, err := inputs.Ask(ctx, w.db, at, form)
	if err != nil {
		t.Fatal(err)
	}
	out, err := inputs.Wait(ctx, w.db, r.ID, r.ExpiresAt)
	if err != nil || out.State != inputs.StateExpired {
		t.Fatalf("wait = %+v, %v", out, err)
	}
	if _, err := inputs.Respond(ctx, w.db, r.ID, nil, inputs.Reply{Answer: inputs.Answer{
		Action: inputs.ActionDecline}}); !errors.Is(err, inputs.ErrAnswered) {
		t.Fatalf("a late answer: %v", err)
	}
	if n, err := inputs.PendingForRun(ctx, w.db, w.run); err != nil || n != 0 {
		t.Fatalf("pending = %d, %v", n, err)
	}
}
