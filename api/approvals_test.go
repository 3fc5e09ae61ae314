package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/approvals"
)

// askFor records a pending approval request in a fresh run of agent.
func askFor(t *testing.T, e *apitest.Env, org, guild, agent string, seq int) approvals.Request {
	t.Helper()
	ctx := context.Background()
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 5, 5) RETURNING id`, agent, guild, org).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	r, err := approvals.Ask(ctx, e.DB, approvals.Request{OrganisationID: org, GuildID: guild,
		Binding: approvals.Binding{RunID: runID, Seq: seq, AgentID: agent, Tool: "wallet_send", ArgsDigest: "sha256:00",
			PolicyVersion: "p1:aa", ExpiresAt: time.Now().Add(time.Hour)},
		Arguments: json.RawMessage(`{"amount":"2","to":"0xabc"}`), AskedBecause: "amount gt 0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTheInboxIsTheOrganisationsOwn(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	req := askFor(t, e, org, guild, agent, 2)

	other := e.Admin("POST", "/api/orgs", map[string]any{"name": "Rival", "slug": "rival"})
	if other.Status != 201 {
		t.Fatalf("create org: %d %s", other.Status, other.Body)
	}
	_, rivalTok := newOperator(t, e, other.Map()["id"].(string), "rex")

	var inbox []approvals.Request
	r := e.Do(annTok, "GET", "/api/orgs/"+org+"/approvals", nil)
	r.JSON(&inbox)
	if r.Status != 200 || len(inbox) != 1 || inbox[0].ID != req.ID || string(inbox[0].Arguments) == "" {
		t.Fatalf("inbox: %d %s", r.Status, r.Body)
	}
	if r := e.Do(rivalTok, "GET", "/api/orgs/"+org+"/approvals", nil); r.Status != 404 {
		t.Fatalf("another organisation read the inbox: %d", r.Status)
	}
	if r := e.Do(rivalTok, "POST", "/api/approvals/"+req.ID, map[string]any{"decision": "approve"}); r.Status != 404 {
		t.Fatalf("another organisation's operator approved: %d %s", r.Status, r.Body)
	}
	for _, bad := range []map[string]any{{"decision": "maybe"}, {"decision": "deny", "stop_asking": true}} {
		if r := e.Do(annTok, "POST", "/api/approvals/"+req.ID, bad); r.Status != 400 {
			t.Fatalf("%v: %d %s", bad, r.Status, r.Body)
		}
	}
	if r := e.Do(annTok, "GET", "/api/orgs/"+org+"/approvals?state=later", nil); r.Status != 400 {
		t.Fatalf("bad state: %d", r.Status)
	}
	r = e.Do(annTok, "POST", "/api/approvals/"+req.ID, map[string]any{"decision": "approve", "stop_asking": true})
	var got approvals.Request
	r.JSON(&got)
	if r.Status != 200 || got.State != approvals.StateApproved || got.DecidedByName != "ann" || !got.StopAsking {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if r := e.Do(annTok, "POST", "/api/approvals/"+req.ID, map[string]any{"decision": "deny"}); r.Status != 409 || r.ErrorCode() != "already_decided" {
		t.Fatalf("second answer: %d %s", r.Status, r.Body)
	}
	if r := e.Do(annTok, "GET", "/api/runs/"+req.RunID+"/approvals", nil); r.Status != 200 {
		t.Fatalf("run's requests: %d", r.Status)
	}
}
