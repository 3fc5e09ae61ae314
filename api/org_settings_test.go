package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/apitest"
)

// An organisation's rate of tool calls: unlimited by default, set by the
// instance admin, read by the organisation's operators, refused clearly when
// out of range, and invisible to another organisation.
func TestOrganisationSettings(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	path := "/api/orgs/" + org + "/settings"
	if r := e.Admin("GET", path, nil); r.Status != 200 || r.Map()["tool_calls_per_minute"] != float64(0) {
		t.Fatalf("default: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", path, map[string]any{"tool_calls_per_minute": 3}); r.Status != 200 || r.Map()["tool_calls_per_minute"] != float64(3) {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	op := e.Operator(org)
	if r := e.Do(op, "GET", path, nil); r.Status != 200 || r.Map()["tool_calls_per_minute"] != float64(3) {
		t.Fatalf("operator reads: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "PUT", path, map[string]any{"tool_calls_per_minute": 0}); r.Status != 403 {
		t.Fatalf("operator changes: %d %s", r.Status, r.Body)
	}
	for _, body := range []any{map[string]any{"tool_calls_per_minute": -1}, map[string]any{"tool_calls_per_minute": 2_000_000}} {
		r := e.Admin("PUT", path, body)
		if r.Status != 422 || r.ErrorCode() != "invalid" || !strings.Contains(string(r.Body), "tool_calls_per_minute") {
			t.Fatalf("out of range %v: %d %s", body, r.Status, r.Body)
		}
	}
	if r := e.Admin("PUT", path, map[string]any{"tool_calls_per_minute": "many"}); r.Status != 400 {
		t.Fatalf("not a number: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", path, nil); r.Map()["tool_calls_per_minute"] != float64(3) {
		t.Fatalf("a refused change lost the setting: %s", r.Body)
	}
	other := e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"})
	if r := e.Do(e.Operator(other.Map()["id"].(string)), "GET", path, nil); r.Status != 404 {
		t.Fatalf("another organisation's operator: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/orgs/00000000-0000-4000-8000-000000000000/settings", map[string]any{"tool_calls_per_minute": 1}); r.Status != 404 {
		t.Fatalf("unknown organisation: %d %s", r.Status, r.Body)
	}
}

// A paused login's health says so, until when and after how many failures.
func TestConnectionHealthShowsAPausedLogin(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	health := func() map[string]any { return me.Admin("GET", "/api/mcp/connections/"+id+"/health", nil).Map() }
	if m := health(); m["calls"] != "flowing" || m["paused_until"] != nil || m["failures_in_a_row"] != float64(0) {
		t.Fatalf("flowing: %v", m)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	// The breaker's row as internal/breaker writes it after 5 failures.
	if _, err := me.DB.Exec(context.Background(), `INSERT INTO login_breakers (connection_id, failures, paused_until, cool_off_ms)
		VALUES ($1, 5, $2, 3600000)`, id, until); err != nil {
		t.Fatal(err)
	}
	m := health()
	if m["calls"] != "paused" || m["paused_until"] != until.Format(time.RFC3339) || m["failures_in_a_row"] != float64(5) {
		t.Fatalf("paused: %v", m)
	}
	if _, err := me.DB.Exec(context.Background(), `UPDATE login_breakers SET paused_until = now() - interval '1 second' WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if m := health(); m["calls"] != "trial_due" {
		t.Fatalf("after the pause: %v", m)
	}
	// The operator's Test is answered: the login flows again.
	if r := me.Admin("POST", "/api/mcp/connections/"+id+"/call", `{"tool":"echo","arguments":{"text":"hi"}}`); r.Status != 200 {
		t.Fatalf("test call: %d %s", r.Status, r.Body)
	}
	if m := health(); m["calls"] != "flowing" || m["failures_in_a_row"] != float64(0) {
		t.Fatalf("after an answered Test: %v", m)
	}
}
