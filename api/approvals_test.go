package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/tools"
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
	annID, annTok := newOperator(t, e, org, "ann")
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
	// The organisation's audit trail tells who answered, and the refused
	// answers left nothing.
	var trail []audit.Event
	r = e.Do(annTok, "GET", "/api/orgs/"+org+"/audit?action=approval&run_id="+req.RunID, nil)
	r.JSON(&trail)
	if r.Status != 200 || len(trail) != 2 || trail[0].Outcome != audit.ApprovalApproved || trail[0].Actor != "user:"+annID ||
		trail[0].ApprovalID != req.ID || trail[1].Outcome != audit.ApprovalProposed || trail[1].Actor != "agent:"+agent {
		t.Fatalf("audit trail: %d %s", r.Status, r.Body)
	}
}

func TestApprovalPoliciesAreCheckedWhenSaved(t *testing.T) {
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		d.Tools = tools.NewRegistry()
		issues.Register(d.Tools, d.DB)
	}})
	org, guild, agent := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	put := func(tok string, body map[string]any) apitest.Response {
		return e.Do(tok, "PUT", "/api/approval-policies", body)
	}
	// report_issue is a native tool every build has; its schema names kind.
	cases := []struct {
		body map[string]any
		want int
		code string
	}{
		{map[string]any{"scope": "guild", "scope_id": guild, "tool": "no_such_tool", "ask": true}, 422, "unknown_tool"},
		{map[string]any{"scope": "guild", "scope_id": guild, "tool": "report_issue", "ask": true,
			"rules": []map[string]any{{"arg": "knd", "op": "eq", "value": "x"}}}, 422, "invalid_policy"},
		{map[string]any{"scope": "guild", "scope_id": guild, "tool": "report_issue", "ask": true, "wait": "forever"}, 400, "bad_request"},
		{map[string]any{"scope": "guild", "scope_id": guild, "tool": "report_issue", "ask": true, "wait": "2000h"}, 422, "invalid_policy"},
		{map[string]any{"scope": "guild", "scope_id": guild, "tool": "report_issue"}, 400, "bad_request"},
		{map[string]any{"scope": "platform", "tool": "report_issue", "ask": true}, 403, "forbidden"},
	}
	for _, c := range cases {
		if r := put(annTok, c.body); r.Status != c.want || r.ErrorCode() != c.code {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
		}
	}
	ok := put(annTok, map[string]any{"scope": "guild", "scope_id": guild, "tool": "report_issue", "ask": true,
		"rules": []map[string]any{{"arg": "kind", "op": "ne", "value": "other"}}, "wait": "48h"})
	if ok.Status != 200 {
		t.Fatalf("save: %d %s", ok.Status, ok.Body)
	}
	var eff approvals.Effective
	r := e.Do(annTok, "GET", "/api/approval-policies?scope=agent&scope_id="+agent+"&tool=report_issue", nil)
	r.JSON(&eff)
	if r.Status != 200 || !eff.Decided || !eff.Ask || eff.Scope != "guild" || eff.WaitText != "48h0m0s" || eff.Version == "" {
		t.Fatalf("effective at the agent: %d %s", r.Status, r.Body)
	}
	// The Tools view shows the setting beside the tool, with its scope.
	var view struct {
		Native []struct {
			Name     string               `json:"name"`
			Approval *approvals.Effective `json:"approval"`
		} `json:"native"`
	}
	e.Do(annTok, "GET", "/api/agents/"+agent+"/tools", nil).JSON(&view)
	shown := false
	for _, n := range view.Native {
		if n.Name == "report_issue" {
			shown = n.Approval != nil && n.Approval.Ask && n.Approval.Scope == "guild"
		}
	}
	if !shown {
		t.Errorf("the Tools view does not show report_issue asking: %+v", view.Native)
	}
	// The agent says "do not ask" under the guild's Ask.
	if r := put(annTok, map[string]any{"scope": "agent", "scope_id": agent, "tool": "report_issue", "ask": false}); r.Status != 200 {
		t.Fatalf("agent override: %d %s", r.Status, r.Body)
	}
	r = e.Do(annTok, "GET", "/api/approval-policies?scope=agent&scope_id="+agent+"&tool=report_issue", nil)
	r.JSON(&eff)
	if eff.Ask || eff.Scope != "agent" {
		t.Fatalf("after the agent's override: %s", r.Body)
	}
	if r := e.Do(annTok, "DELETE", "/api/approval-policies", map[string]any{"scope": "agent", "scope_id": agent, "tool": "report_issue"}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.Do(annTok, "DELETE", "/api/approval-policies", map[string]any{"scope": "agent", "scope_id": agent, "tool": "report_issue"}); r.Status != 404 {
		t.Fatalf("second delete: %d", r.Status)
	}
}
