package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/runs"
)

// An operator following a run sees the call it waits for as an "approval"
// event, with the redacted arguments and why it asked, and again once it is
// answered, with who answered and why.
func TestApprovalRequestIsARunEvent(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	_, ann := newOperator(t, e, org, "ann")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure bound
	defer cancel()
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 'running', 5, 5) RETURNING id`, agent, guild, org).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", e.HTTP.URL+"/api/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+ann)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 64) // event type, data
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		typ := ""
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				typ = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				events <- [2]string{typ, strings.TrimPrefix(l, "data: ")}
			}
		}
	}()
	next := func(typ, want string) string {
		t.Helper()
		for ev := range events {
			if ev[0] == typ && strings.Contains(ev[1], want) {
				return ev[1]
			}
		}
		t.Fatalf("the stream ended before a %s event with %s", typ, want)
		return ""
	}
	next("status", `"status":"running"`)

	r, err := approvals.Ask(ctx, e.DB, approvals.Request{OrganisationID: org, GuildID: guild,
		Binding: approvals.Binding{RunID: runID, Seq: 2, AgentID: agent, Tool: "wallet_send", ArgsDigest: "sha256:00",
			PolicyVersion: "p1:aa", ExpiresAt: time.Now().Add(time.Hour)},
		Arguments: json.RawMessage(`{"amount":"2","to":"0xabc"}`), AskedBecause: "the organisation asks"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.MarkWaiting(ctx, e.DB, runID); err != nil {
		t.Fatal(err)
	}
	var shown approvals.Request
	if err := json.Unmarshal([]byte(next("approval", `"state":"pending"`)), &struct {
		Data *approvals.Request `json:"data"`
	}{&shown}); err != nil || shown.ID != r.ID || shown.AskedBecause != "the organisation asks" || !strings.Contains(string(shown.Arguments), `"amount"`) {
		t.Fatalf("pending event: %+v %v", shown, err)
	}
	if a := e.Do(ann, "POST", "/api/approvals/"+r.ID, map[string]any{"decision": "deny", "reason": "not this week"}); a.Status != 200 {
		t.Fatalf("deny: %d %s", a.Status, a.Body)
	}
	if l := next("approval", `"state":"denied"`); !strings.Contains(l, r.ID) || !strings.Contains(l, `"decided_by":"ann"`) || !strings.Contains(l, "not this week") {
		t.Fatalf("denied event: %s", l)
	}
	if err := runs.Finish(ctx, e.DB, runID, runs.StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	next("status", `"completed"`)
}
