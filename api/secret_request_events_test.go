package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/runs"
)

// An operator following a run sees a secret request as an event while the
// call waits, and again once it is answered; the value never appears.
func TestSecretRequestIsARunEvent(t *testing.T) {
	e := secretsEnv(t, true)
	org, guild, agent := e.Hierarchy()
	opID, op := newOperator(t, e, org, "op")
	ctx := context.Background()
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining, started_by)
		VALUES ($1, $2, $3, 'direct', 'running', 5, 5, $4) RETURNING id`, agent, guild, org, opID).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.HTTP.URL+"/api/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(want string) string {
		t.Helper()
		for l := range lines {
			if strings.HasPrefix(l, "data: ") && strings.Contains(l, want) {
				return l
			}
		}
		t.Fatalf("the stream ended before an event with %s", want)
		return ""
	}
	next(`"status":"running"`)

	r, err := agentsecrets.OpenRequest(ctx, e.DB, agentsecrets.NewRequest{RunID: runID, AgentID: agent, OrgID: org, Seq: 2,
		Name: "VENDOR_TOKEN", Reason: "to call the vendor"})
	if err != nil {
		t.Fatal(err)
	}
	if l := next(`"status":"pending"`); !strings.Contains(l, r.ID) || !strings.Contains(l, `"name":"VENDOR_TOKEN"`) || !strings.Contains(l, "to call the vendor") {
		t.Fatalf("pending event: %s", l)
	}
	const value = "vendor-token-0a1b2c3d4e"
	if a := e.Do(op, "POST", "/api/secret-requests/"+r.ID, map[string]any{"value": value}); a.Status != 200 {
		t.Fatalf("answer: %d %s", a.Status, a.Body)
	}
	if l := next(`"status":"provided"`); !strings.Contains(l, r.ID) || strings.Contains(l, value) {
		t.Fatalf("answered event: %s", l)
	}
	if err := runs.Finish(ctx, e.DB, runID, runs.StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	next(`"completed"`)
}
