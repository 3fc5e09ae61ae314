package agentsecrets_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/tools"
)

// Handing an agent's secrets to a command is a read in the audit trail: one
// event per secret, with its name, the agent and the run, never the value.
func TestEnvRecordsEachRead(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for name, value := range map[string]string{"API_TOKEN": "atok-0123456789abcdef", "DB_PASSWORD": "dbpw-0123456789abcdef"} {
		if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, name, value, "user:u1"); err != nil {
			t.Fatal(err)
		}
	}
	run := mustRun(t, w)
	src := agentsecrets.Source{DB: w.db, Keyring: w.kr}
	env, err := src.Env(ctx, tools.Call{Name: "shell", AgentID: w.agent, RunID: run, Seq: 3, Trigger: "direct"})
	if err != nil || env["API_TOKEN"] != "atok-0123456789abcdef" || len(env) != 2 {
		t.Fatalf("env: %d %v", len(env), err)
	}
	got, err := audit.List(ctx, w.db, audit.Filter{Orgs: []string{w.org}, Action: audit.ActionSecretRead})
	if err != nil || len(got) != 2 {
		t.Fatalf("reads: %+v %v", got, err)
	}
	for _, e := range got {
		if e.RunID != run || e.AgentID != w.agent || e.GuildID != w.guild || e.Seq != 3 || e.Actor != "agent:"+w.agent ||
			(e.Tool != "API_TOKEN" && e.Tool != "DB_PASSWORD") {
			t.Fatalf("read event: %+v", e)
		}
		raw, _ := json.Marshal(e)
		if strings.Contains(string(raw), "0123456789abcdef") {
			t.Fatalf("a read event holds the value: %s", raw)
		}
	}
	// An agent with nothing granted reads nothing.
	if env, err := src.Env(ctx, tools.Call{AgentID: w.stray, RunID: run}); err != nil || len(env) != 0 {
		t.Fatalf("stray env: %v %v", env, err)
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE action = 'secret_read'`); n != 2 {
		t.Fatalf("%d reads recorded", n)
	}
}
