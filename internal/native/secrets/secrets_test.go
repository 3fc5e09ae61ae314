package secrets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/native/secrets"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

type env struct {
	db                *pgxpool.Pool
	kr                *secret.Keyring
	reg               *tools.Registry
	org, guild, agent string
}

func newEnv(t *testing.T, wait time.Duration) *env {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	entry, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, kr: kr, reg: tools.NewRegistry()}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org))
	must(db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org).Scan(&e.guild))
	must(db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1, 'scout') RETURNING id`, e.guild).Scan(&e.agent))
	secrets.Register(e.reg, secrets.Deps{DB: db, Keyring: kr, Wait: wait, Poll: 20 * time.Millisecond})
	return e
}

func (e *env) run(t *testing.T, trigger string) string {
	t.Helper()
	var id string
	if err := e.db.QueryRow(context.Background(), `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, $4, 5, 5) RETURNING id`, e.agent, e.guild, e.org, trigger).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) call(ctx context.Context, name, runID, trigger string, seq int, args string) string {
	return e.callOn(ctx, e.reg, name, runID, trigger, seq, args)
}

// callOn is call through another registry of the same tools (another wait).
func (e *env) callOn(ctx context.Context, reg *tools.Registry, name, runID, trigger string, seq int, args string) string {
	return reg.Invoke(ctx, tools.Call{Name: name, Args: json.RawMessage(args), RunID: runID, AgentID: e.agent,
		GuildID: e.guild, OrgID: e.org, Trigger: trigger, Seq: seq, CallID: "c1"})
}

func (e *env) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// secret_store keeps the value as the agent's own secret, granted to it,
// and its result names the secret without the value; bad input is refused
// by field and stores nothing.
func TestSecretStore(t *testing.T) {
	e := newEnv(t, time.Second)
	ctx := context.Background()
	run := e.run(t, "direct")
	const v = "sk-minted-0123456789abcdef"
	out := e.call(ctx, secrets.ToolStore, run, "direct", 2, `{"name":"MINTED_KEY","value":"`+v+`"}`)
	if strings.Contains(out, v) || !strings.Contains(out, "stored secret MINTED_KEY, granted to you") {
		t.Fatalf("result %q", out)
	}
	vals, err := agentsecrets.Granted(ctx, e.db, e.kr, e.agent)
	if err != nil || len(vals) != 1 || vals[0].Value != v {
		t.Fatalf("granted %v %v", vals, err)
	}
	for args, want := range map[string]string{
		`{"name":"bad-name","value":"long-enough-value"}`:                "ERROR: name: must match",
		`{"name":"OK_NAME","value":""}`:                                  "ERROR: value: is required",
		`{"name":"OK_NAME","value":"` + strings.Repeat("x", 5000) + `"}`: "ERROR: value: must be at most 4096 bytes",
		`{"name":"OK_NAME","value":"[REDACTED]"}`:                        "ERROR: value: this worker could not keep",
	} {
		if got := e.call(ctx, secrets.ToolStore, run, "direct", 4, args); !strings.HasPrefix(got, want) {
			t.Errorf("%.60s: %q, want %q", args, got, want)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM agent_secrets`); n != 1 {
		t.Fatalf("%d secrets stored", n)
	}
}

// secret_request waits for the operator: provided and declined reach the
// model; a request on a non-direct run is refused naming trigger and
// nothing is stored; without an answer the bound ends the wait.
func TestSecretRequest(t *testing.T) {
	e := newEnv(t, 300*time.Millisecond)
	ctx := context.Background()
	p := access.Principal{Admin: true}

	sched := e.run(t, "schedule")
	if got := e.call(ctx, secrets.ToolRequest, sched, "schedule", 2, `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`); !strings.HasPrefix(got, "ERROR: trigger: secret_request is for direct runs only") {
		t.Fatalf("non-direct: %q", got)
	}
	if n := e.count(t, `SELECT count(*) FROM secret_requests`); n != 0 {
		t.Fatal("a refused request was stored")
	}

	run := e.run(t, "direct")
	if got := e.call(ctx, secrets.ToolRequest, run, "direct", 2, `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`); !strings.HasPrefix(got, "no answer yet to your request for VENDOR_TOKEN") ||
		!strings.Contains(got, "this call waits") || !strings.Contains(got, "do not ask again in this run") {
		t.Fatalf("timeout: %q", got)
	}
	req, err := agentsecrets.RequestAt(ctx, e.db, run, 2)
	if err != nil {
		t.Fatal(err)
	}
	short := "short"
	if _, err := agentsecrets.AnswerRequest(ctx, e.db, e.kr, p, req.ID, agentsecrets.Answer{Value: &short}, "user:op"); field(err) != "value" {
		t.Fatalf("short value: %v", err)
	}
	if _, err := agentsecrets.AnswerRequest(ctx, e.db, e.kr, p, req.ID, agentsecrets.Answer{}, "user:op"); field(err) != "value" {
		t.Fatalf("empty answer: %v", err)
	}
	val := "vendor-token-0123456789"
	// The operator's answer, not the clock, must end this call: it waits
	// with a bound that only fails the test on a machine too slow to answer.
	patient := tools.NewRegistry()
	secrets.Register(patient, secrets.Deps{DB: e.db, Keyring: e.kr, Wait: 2 * time.Minute, Poll: 20 * time.Millisecond})
	done := make(chan string)
	go func() {
		done <- e.callOn(ctx, patient, secrets.ToolRequest, run, "direct", 4, `{"name":"LATE_TOKEN","reason":"later"}`)
	}()
	for {
		if r, err := agentsecrets.RequestAt(ctx, e.db, run, 4); err == nil {
			if _, err := agentsecrets.AnswerRequest(ctx, e.db, e.kr, p, r.ID, agentsecrets.Answer{Value: &val}, "user:op"); err != nil {
				t.Fatal(err)
			}
			break
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := <-done; !strings.HasPrefix(got, "the operator provided LATE_TOKEN") || strings.Contains(got, val) {
		t.Fatalf("provided: %q", got)
	}
	if _, err := agentsecrets.AnswerRequest(ctx, e.db, e.kr, p, req.ID, agentsecrets.Answer{Decline: true}, "user:op"); err != nil {
		t.Fatal(err)
	}
	// A retried call (same run and seq) sees the answer at once.
	if got := e.call(ctx, secrets.ToolRequest, run, "direct", 2, `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`); !strings.HasPrefix(got, "the operator declined to provide VENDOR_TOKEN") {
		t.Fatalf("declined: %q", got)
	}
	if _, err := agentsecrets.AnswerRequest(ctx, e.db, e.kr, p, req.ID, agentsecrets.Answer{Decline: true}, "user:op"); !errors.Is(err, agentsecrets.ErrAnswered) {
		t.Fatalf("second answer: %v", err)
	}
	vals, _ := agentsecrets.Granted(ctx, e.db, e.kr, e.agent)
	if len(vals) != 1 || vals[0].Name != "LATE_TOKEN" {
		t.Fatalf("granted %v", vals)
	}
}

func field(err error) string {
	var ve interface{ Error() string }
	if errors.As(err, &ve) {
		msg := err.Error()
		if i := strings.Index(msg, ":"); i > 0 {
			return msg[:i]
		}
	}
	return ""
}

// secret_store never replaces or shadows a secret an operator set under the
// same name, whether owned by the agent, its guild or its organisation; the
// agent's own earlier value is replaced.
func TestSecretStoreNeverOverwritesAnOperatorSecret(t *testing.T) {
	e := newEnv(t, time.Second)
	ctx := context.Background()
	run := e.run(t, "direct")
	const operatorValue = "operator-value-0123456789"
	for _, owner := range []agentsecrets.Place{
		{Scope: agentsecrets.ScopeAgent, OrgID: e.org, GuildID: e.guild, AgentID: e.agent},
		{Scope: agentsecrets.ScopeGuild, OrgID: e.org, GuildID: e.guild},
	} {
		name := "VENDOR_" + strings.ToUpper(string(owner.Scope))
		if _, _, err := agentsecrets.Set(ctx, e.db, e.kr, owner, name, operatorValue, "user:op"); err != nil {
			t.Fatal(err)
		}
		out := e.call(ctx, secrets.ToolStore, run, "direct", 2, `{"name":"`+name+`","value":"agent-value-0123456789"}`)
		if !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, "an operator set at the "+string(owner.Scope)) {
			t.Fatalf("%s: %q", name, out)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM agent_secret_audit WHERE action = 'replace'`); n != 0 {
		t.Fatalf("%d operator secrets replaced", n)
	}
	if n := e.count(t, `SELECT count(*) FROM agent_secrets WHERE owner_scope = 'agent' AND name = 'VENDOR_GUILD'`); n != 0 {
		t.Fatal("the agent's secret shadows its guild's")
	}
	if out := e.call(ctx, secrets.ToolStore, run, "direct", 4, `{"name":"OWN_KEY","value":"first-value-0123"}`); !strings.HasPrefix(out, "stored") {
		t.Fatalf("own key: %q", out)
	}
	if out := e.call(ctx, secrets.ToolStore, run, "direct", 6, `{"name":"OWN_KEY","value":"second-value-0123"}`); !strings.HasPrefix(out, "replaced") {
		t.Fatalf("own key again: %q", out)
	}
}

// Asking for a name an operator set could only end in a refused answer, so
// secret_request is refused at once, saying what to do, and opens no request.
func TestSecretRequestForAnOperatorSecretIsRefusedAtOnce(t *testing.T) {
	e := newEnv(t, time.Second)
	ctx := context.Background()
	run := e.run(t, "direct")
	guild := agentsecrets.Place{Scope: agentsecrets.ScopeGuild, OrgID: e.org, GuildID: e.guild}
	if _, _, err := agentsecrets.Set(ctx, e.db, e.kr, guild, "VENDOR_TOKEN", "operator-value-0123456789", "user:op"); err != nil {
		t.Fatal(err)
	}
	out := e.call(ctx, secrets.ToolRequest, run, "direct", 2, `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`)
	if !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, "an operator set at the guild") || !strings.Contains(out, "ask an operator to grant it") {
		t.Fatalf("request for an operator's secret: %q", out)
	}
	if n := e.count(t, `SELECT count(*) FROM secret_requests`); n != 0 {
		t.Fatalf("%d requests opened", n)
	}
}

// In a run that can wait durably, secret_request does not wait inside its
// call: it suspends until the request is answered (its id is the key the
// answer signals) or a day has passed, and the call made again reads the
// answer.
func TestSecretRequestSuspendsWhereTheRunCanWait(t *testing.T) {
	e := newEnv(t, 300*time.Millisecond)
	p := access.Principal{Admin: true}
	run := e.run(t, "direct")
	args := `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`
	ctx, suspended := tools.WithSuspend(context.Background())
	if got := e.call(ctx, secrets.ToolRequest, run, "direct", 2, args); got != "" {
		t.Fatalf("a suspended call answered %q", got)
	}
	sus := suspended()
	req, err := agentsecrets.RequestAt(context.Background(), e.db, run, 2)
	if err != nil || sus == nil || sus.Key != req.ID || sus.Until.Sub(req.CreatedAt) != secrets.DefaultDurableWait {
		t.Fatalf("suspension %+v for request %+v (%v)", sus, req, err)
	}
	if _, err := agentsecrets.AnswerRequest(context.Background(), e.db, e.kr, p, req.ID, agentsecrets.Answer{Value: ptr("vendor-token-0123456789")}, "test"); err != nil {
		t.Fatal(err)
	}
	ctx, suspended = tools.WithSuspend(context.Background())
	if got := e.call(ctx, secrets.ToolRequest, run, "direct", 2, args); !strings.HasPrefix(got, "the operator provided VENDOR_TOKEN") || suspended() != nil {
		t.Fatalf("the call made again: %q", got)
	}
}

// The run waits as long as the operators' waiting time for approvals of
// secret_request says (here the guild's three days, with ask off so the call
// itself is not held), fixed when the request opens: a later change of the
// setting does not move a request already open.
func TestSecretRequestWaitsTheOperatorsWaitingTime(t *testing.T) {
	e := newEnv(t, 300*time.Millisecond)
	ctx := context.Background()
	set := func(wait time.Duration) {
		t.Helper()
		if _, err := approvals.Save(ctx, e.db, approvals.Setting{Scope: approvals.ScopeGuild, ScopeID: e.guild,
			Tool: secrets.ToolRequest, Wait: wait}, nil); err != nil {
			t.Fatal(err)
		}
	}
	set(72 * time.Hour)
	run := e.run(t, "direct")
	args := `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`
	sctx, suspended := tools.WithSuspend(ctx)
	if got := e.call(sctx, secrets.ToolRequest, run, "direct", 2, args); got != "" {
		t.Fatalf("a suspended call answered %q", got)
	}
	req, err := agentsecrets.RequestAt(ctx, e.db, run, 2)
	if err != nil || req.WaitUntil == nil || req.WaitUntil.Sub(req.CreatedAt) != 72*time.Hour {
		t.Fatalf("request %+v (%v)", req, err)
	}
	if sus := suspended(); sus == nil || !sus.Until.Equal(*req.WaitUntil) {
		t.Fatalf("suspension %+v, want until %s", sus, req.WaitUntil)
	}
	set(time.Hour)
	sctx, suspended = tools.WithSuspend(ctx)
	e.call(sctx, secrets.ToolRequest, run, "direct", 2, args)
	if sus := suspended(); sus == nil || !sus.Until.Equal(*req.WaitUntil) {
		t.Fatalf("a resumed call moved its bound: %+v, want %s", sus, req.WaitUntil)
	}
}

func ptr(s string) *string { return &s }
