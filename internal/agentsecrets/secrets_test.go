package agentsecrets_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/validation"
)

type world struct {
	db                   *pgxpool.Pool
	kr                   *secret.Keyring
	entry                string
	org, other           string
	guild, guild2        string
	agent, peer, stray   string // agent and peer in guild, stray in guild2
	foreign              string // an agent of another organisation
	orgP, guildP, agentP agentsecrets.Place
}

func entry(t testing.TB, kid string) string {
	t.Helper()
	e, err := secret.GenerateKey(kid)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newWorld(t testing.TB) *world {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	w := &world{db: db, entry: entry(t, "k1")}
	if w.kr, err = secret.ParseKeyring(w.entry); err != nil {
		t.Fatal(err)
	}
	q := func(dst *string, sql string, args ...any) {
		t.Helper()
		if err := db.QueryRow(ctx, sql, args...).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	q(&w.org, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`)
	q(&w.other, `INSERT INTO organisations (name, slug) VALUES ('Other', 'other') RETURNING id`)
	q(&w.guild, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, w.org)
	q(&w.guild2, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'sales') RETURNING id`, w.org)
	q(&w.agent, `INSERT INTO agents (guild_id, name) VALUES ($1, 'scout') RETURNING id`, w.guild)
	q(&w.peer, `INSERT INTO agents (guild_id, name) VALUES ($1, 'peer') RETURNING id`, w.guild)
	q(&w.stray, `INSERT INTO agents (guild_id, name) VALUES ($1, 'stray') RETURNING id`, w.guild2)
	var g3 string
	q(&g3, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'x') RETURNING id`, w.other)
	q(&w.foreign, `INSERT INTO agents (guild_id, name) VALUES ($1, 'foreign') RETURNING id`, g3)
	w.orgP = w.place(t, agentsecrets.ScopeOrganisation, w.org)
	w.guildP = w.place(t, agentsecrets.ScopeGuild, w.guild)
	w.agentP = w.place(t, agentsecrets.ScopeAgent, w.agent)
	return w
}

func (w *world) place(t testing.TB, s agentsecrets.Scope, id string) agentsecrets.Place {
	t.Helper()
	pl, err := agentsecrets.LoadPlace(context.Background(), w.db, s, id)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func (w *world) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	if err := w.db.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (w *world) granted(t *testing.T, agent string) map[string]string {
	t.Helper()
	vals, err := agentsecrets.Granted(context.Background(), w.db, w.kr, agent)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range vals {
		out[v.Name] = v.Value
	}
	return out
}

func field(err error) string {
	var ve *validation.Error
	if errors.As(err, &ve) && len(ve.Problems) > 0 {
		return ve.Problems[0].Field
	}
	return ""
}

// Every bad name or value is refused naming its field, and nothing is stored.
func TestBadInputIsRefusedByField(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cases := []struct{ name, value, field string }{
		{"lower_case", "long-enough-value", "name"},
		{"1STARTS_WITH_DIGIT", "long-enough-value", "name"},
		{"", "long-enough-value", "name"},
		{strings.Repeat("A", 65), "long-enough-value", "name"},
		{"PATH", "long-enough-value", "name"},
		{"GUILD_RUN_ID", "long-enough-value", "name"},
		{"API_KEY", "", "value"},
		{"API_KEY", "short", "value"},
		{"API_KEY", strings.Repeat("x", agentsecrets.MaxValueBytes+1), "value"},
		{"API_KEY", "has\x00nul-byte-inside", "value"},
	}
	for _, c := range cases {
		_, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.orgP, c.name, c.value, "user:test")
		if got := field(err); got != c.field {
			t.Errorf("Set(%q, %d bytes): field %q (%v), want %q", c.name, len(c.value), got, err, c.field)
		}
		if err != nil && c.value != "" && len(c.value) > 8 && strings.Contains(err.Error(), c.value) {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM agent_secrets`) + w.count(t, `SELECT count(*) FROM agent_secret_audit`); n != 0 {
		t.Fatalf("%d rows stored after refusals", n)
	}
	if _, _, err := agentsecrets.Set(ctx, w.db, nil, w.orgP, "API_KEY", "long-enough-value", "user:test"); !errors.Is(err, agentsecrets.ErrNoKeyring) {
		t.Fatalf("without a keyring: %v", err)
	}
}

// Grants follow the chain: an organisation's secret reaches no agent until
// granted; a guild grant reaches that guild's agents; an agent row revokes
// for that agent only; an agent-owned secret reaches its agent; a grant
// outside the owner is refused naming scope_id and stores nothing.
func TestGrantsFollowTheChain(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	s, created, err := agentsecrets.Set(ctx, w.db, w.kr, w.orgP, "DEPLOY_TOKEN", "dtok-0123456789abcdef", "user:u1")
	if err != nil || !created {
		t.Fatalf("set: %v %v", created, err)
	}
	if len(s.Reaches) != 0 || len(w.granted(t, w.agent)) != 0 {
		t.Fatalf("an ungranted organisation secret reaches %v", s.Reaches)
	}
	if _, err := agentsecrets.SetGrant(ctx, w.db, w.orgP, "DEPLOY_TOKEN", w.guildP, true, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if got := w.granted(t, w.agent)["DEPLOY_TOKEN"]; got != "dtok-0123456789abcdef" {
		t.Fatalf("guild grant: agent gets %q", got)
	}
	if len(w.granted(t, w.stray)) != 0 {
		t.Fatal("a guild grant reached another guild's agent")
	}
	s, err = agentsecrets.SetGrant(ctx, w.db, w.orgP, "DEPLOY_TOKEN", w.agentP, false, "user:u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.granted(t, w.agent)) != 0 || len(w.granted(t, w.peer)) != 1 {
		t.Fatal("an agent revoke did not apply to that agent alone")
	}
	if len(s.Reaches) != 1 || s.Reaches[0].AgentID != w.peer || s.Reaches[0].DecidedBy != agentsecrets.ScopeGuild {
		t.Fatalf("reaches %+v", s.Reaches)
	}
	if _, err := agentsecrets.RemoveGrant(ctx, w.db, w.orgP, "DEPLOY_TOKEN", w.agentP, "user:u1"); err != nil {
		t.Fatal(err)
	}
	if len(w.granted(t, w.agent)) != 1 {
		t.Fatal("removing the agent row did not restore the guild grant")
	}

	// A guild's secret cannot be granted to another guild's agent.
	if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.guildP, "GUILD_ONLY", "guild-secret-value-1", "user:u1"); err == nil {
		t.Fatal("GUILD_ prefix accepted")
	}
	if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.guildP, "OPS_ONLY", "guild-secret-value-1", "user:u1"); err != nil {
		t.Fatal(err)
	}
	before := w.count(t, `SELECT count(*) FROM agent_secret_grants`)
	_, err = agentsecrets.SetGrant(ctx, w.db, w.guildP, "OPS_ONLY", w.place(t, agentsecrets.ScopeAgent, w.stray), true, "user:u1")
	if field(err) != "scope_id" {
		t.Fatalf("grant outside the owner: %v", err)
	}
	if w.count(t, `SELECT count(*) FROM agent_secret_grants`) != before {
		t.Fatal("a refused grant stored a row")
	}

	// An agent's own secret reaches it, and wins over a wider one of the same name.
	if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, "DEPLOY_TOKEN", "agent-own-token-value", "agent:x"); err != nil {
		t.Fatal(err)
	}
	if got := w.granted(t, w.agent)["DEPLOY_TOKEN"]; got != "agent-own-token-value" {
		t.Fatalf("nearest owner should win, got %q", got)
	}
	if len(w.granted(t, w.foreign)) != 0 {
		t.Fatal("another organisation's agent got a secret")
	}
}

// Values are sealed at rest and never in the audit; replacing keeps the
// secret's id; rotation re-seals the table under the new key.
func TestSealedAuditedRotated(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const v1, v2 = "first-value-0123456789", "second-value-9876543210"
	s, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, "API_KEY", v1, "user:u1")
	if err != nil {
		t.Fatal(err)
	}
	s2, created, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, "API_KEY", v2, "user:u2")
	if err != nil || created || s2.ID != s.ID || s2.SetBy != "user:u2" {
		t.Fatalf("replace: %+v %v %v", s2, created, err)
	}
	var ct []byte
	if err := w.db.QueryRow(ctx, `SELECT ciphertext FROM agent_secrets WHERE id = $1`, s.ID).Scan(&ct); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ct, []byte(v2)) {
		t.Fatal("the value is stored in clear")
	}
	if err := agentsecrets.Delete(ctx, w.db, w.agentP, "API_KEY", "user:u3"); err != nil {
		t.Fatal(err)
	}
	entries, err := agentsecrets.Audit(ctx, w.db, w.org, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action+" by "+e.Actor)
		if strings.Contains(string(e.Detail), v1) || strings.Contains(string(e.Detail), v2) {
			t.Fatal("the audit holds a value")
		}
	}
	if strings.Join(actions, ", ") != "delete by user:u3, replace by user:u2, set by user:u1" {
		t.Fatalf("audit %v", actions)
	}

	// Rotation: sealed under k1, re-sealed under k2, opened with k2 alone.
	if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, "API_KEY", v1, "user:u1"); err != nil {
		t.Fatal(err)
	}
	run := mustRun(t, w)
	if _, _, err := (agentsecrets.Vault{DB: w.db, Keyring: w.kr}).Hide(ctx, run, 2, "c1", `{"name":"X_KEY","value":"`+v2+`"}`); err != nil {
		t.Fatal(err)
	}
	k2 := entry(t, "k2")
	rotating, err := secret.ParseKeyring(k2 + "," + w.entry)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sealed.NewRegistry(agentsecrets.SealedTables...).Rotate(ctx, w.db, rotating, 10, nil)
	if err != nil || !st.Complete() {
		t.Fatalf("rotate: %+v %v", st, err)
	}
	resealed := map[string]int{}
	for _, tr := range st.Tables {
		resealed[tr.Table] = tr.Resealed
	}
	if resealed["agent_secrets"] != 1 || resealed["secret_call_arguments"] != 1 {
		t.Fatalf("rotation re-sealed %v", resealed)
	}
	onlyNew, err := secret.ParseKeyring(k2)
	if err != nil {
		t.Fatal(err)
	}
	w.kr = onlyNew
	if got := w.granted(t, w.agent)["API_KEY"]; got != v1 {
		t.Fatalf("after rotation the secret opens as %q", got)
	}
	args, _, ok, err := (agentsecrets.Vault{DB: w.db, Keyring: onlyNew}).Reveal(ctx, run, 2, "c1")
	if err != nil || !ok || !strings.Contains(args, v2) {
		t.Fatalf("sealed call arguments after rotation: %v %v", ok, err)
	}
}

func mustRun(t testing.TB, w *world) string {
	t.Helper()
	var id string
	if err := w.db.QueryRow(context.Background(), `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 5, 5) RETURNING id`, w.agent, w.guild, w.org).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
