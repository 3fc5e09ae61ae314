package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

type world struct {
	db                       *pgxpool.Pool
	org, other, guild, agent string
	run, user                string
}

func newWorld(t *testing.T) world {
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

func (w world) request(seq int, digest string, expires time.Time) approvals.Request {
	return approvals.Request{
		OrganisationID: w.org, GuildID: w.guild,
		Binding: approvals.Binding{RunID: w.run, Seq: seq, AgentID: w.agent, Tool: "wallet_send", LoginID: "c1",
			ArgsDigest: digest, PolicyVersion: "p1:aa", ExpiresAt: expires},
		Arguments: json.RawMessage(`{"amount":"2","to":"0xabc"}`), AskedBecause: "rule 1: amount gt 0.1",
	}
}

func TestARetriedAskRecordsOneRequest(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r := w.request(3, "sha256:01", time.Now().Add(time.Hour))
	a, err := approvals.Ask(ctx, w.db, r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := approvals.Ask(ctx, w.db, r)
	if err != nil || b.ID != a.ID {
		t.Fatalf("second ask: %v, id %s vs %s", err, b.ID, a.ID)
	}
	r.PolicyVersion = "p1:bb"
	c, err := approvals.Ask(ctx, w.db, r)
	if err != nil || c.ID == a.ID {
		t.Fatalf("a changed policy must ask anew: %v", err)
	}
}

func TestAnApprovalServesItsCallOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r, err := approvals.Ask(ctx, w.db, w.request(3, "sha256:01", time.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approvals.Decide(ctx, w.db, r.ID, []string{w.other}, approvals.Decision{Approve: true, UserID: w.user}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another organisation's operator decided: %v", err)
	}
	d, err := approvals.Decide(ctx, w.db, r.ID, []string{w.org}, approvals.Decision{Approve: true, UserID: w.user, UserName: "Ann"})
	if err != nil || d.State != approvals.StateApproved || d.DecidedByName != "Ann" {
		t.Fatalf("approve: %+v %v", d, err)
	}
	if _, err := approvals.Decide(ctx, w.db, r.ID, []string{w.org}, approvals.Decision{}); !errors.Is(err, approvals.ErrDecided) {
		t.Fatalf("a second answer: %v", err)
	}

	other := r.Binding
	other.ArgsDigest = "sha256:02"
	if _, err := useIn(w.db, r.ID, other); !errors.Is(err, approvals.ErrArgumentsDiffer) {
		t.Fatalf("other arguments: %v", err)
	}
	// Two executions race for one approval: one runs.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = useIn(w.db, r.ID, r.Binding) }()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, approvals.ErrUsed):
			t.Fatalf("use: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d calls ran under one approval", ok)
	}
}

func TestAnswersAfterExpiryAreRefusedAndExpireTheRequest(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r, err := approvals.Ask(ctx, w.db, w.request(3, "sha256:01", time.Now().Add(-time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := approvals.Decide(ctx, w.db, r.ID, []string{w.org}, approvals.Decision{Approve: true, UserID: w.user})
	if !errors.Is(err, approvals.ErrDecided) || got.State != approvals.StateExpired {
		t.Fatalf("late approval: %s %v", got.State, err)
	}
	if _, err := useIn(w.db, r.ID, r.Binding); !errors.Is(err, approvals.ErrNotApproved) {
		t.Fatalf("use of an expired request: %v", err)
	}
	if p, _ := approvals.Pending(ctx, w.db, []string{w.org}, 0); len(p) != 0 {
		t.Fatalf("expired request still pending: %v", p)
	}
}

func TestExpiryLosesToAnAnswerThatCameFirst(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	r, _ := approvals.Ask(ctx, w.db, w.request(3, "sha256:01", time.Now().Add(time.Hour)))
	if _, err := approvals.Decide(ctx, w.db, r.ID, nil, approvals.Decision{Reason: "not this month"}); err != nil {
		t.Fatal(err)
	}
	got, err := approvals.Expire(ctx, w.db, r.ID)
	if err != nil || got.State != approvals.StateDenied || got.Reason != "not this month" {
		t.Fatalf("expire after a denial: %+v %v", got, err)
	}
}

func useIn(db *pgxpool.Pool, id string, b approvals.Binding) (approvals.Request, error) {
	var r approvals.Request
	err := pgx.BeginFunc(context.Background(), db, func(tx pgx.Tx) error {
		var err error
		r, err = approvals.Use(context.Background(), tx, id, b, time.Now())
		return err
	})
	return r, err
}

func TestTheChainResolvesLikeTheWalk(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	types := map[string]approvals.ArgType{"amount": "string"}
	save := func(scope, id, tool string, ask bool) {
		t.Helper()
		if _, err := approvals.Save(ctx, w.db, approvals.Setting{Scope: scope, ScopeID: id, Tool: tool, Ask: ask}, types); err != nil {
			t.Fatal(err)
		}
	}
	save(approvals.ScopePlatform, "", "wallet_send", true)
	save(approvals.ScopeGuild, w.guild, "wallet_send", false)
	save(approvals.ScopeOrganisation, w.org, "gmail_send", true)
	at := approvals.Place{OrganisationID: w.org, GuildID: w.guild, AgentID: w.agent}
	chain, err := approvals.Chain(ctx, w.db, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"wallet_send", "gmail_send", "notes_write"} {
		walked, err := approvals.Resolve(ctx, w.db, at, tool)
		if err != nil {
			t.Fatal(err)
		}
		if got := approvals.In(chain, tool); got.Decided != walked.Decided || got.Ask != walked.Ask || got.Scope != walked.Scope || got.Version != walked.Version {
			t.Errorf("%s: chain %+v, walk %+v", tool, got, walked)
		}
	}
}
