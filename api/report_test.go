package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/errorreport"
	"github.com/guilds/guilds/internal/errorreport/errorreporttest"
)

// An internal failure of a handler reaches Sentry with the ids its path names
// and nothing of the request: not its token, not its body.
func TestInternalErrorsAreReportedWithoutTheRequest(t *testing.T) {
	sentry := errorreporttest.New(t)
	rep, err := errorreport.New(sentry.DSN(), nil, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.Reporter = rep }})
	_, _, agent := e.Hierarchy()
	// The runs table goes away under the API: listing an agent's runs fails inside.
	if _, err := e.DB.Exec(context.Background(), `ALTER TABLE runs RENAME TO runs_gone`); err != nil {
		t.Fatal(err)
	}
	if r := e.Admin("GET", "/api/agents/"+agent+"/runs", nil); r.Status != 500 || r.ErrorCode() != "internal" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// A client error is not the platform's failure: nothing is reported.
	if r := e.Admin("POST", "/api/orgs", map[string]any{"name": ""}); r.Status != 422 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	rep.Flush(10 * time.Second)
	got := sentry.Received()
	if sentry.Events() != 1 {
		t.Fatalf("want one event, got:\n%s", got)
	}
	for _, want := range []string{`"agent_id":"` + agent + `"`, `/api/agents/:id/runs`, "runs"} {
		if !strings.Contains(got, want) {
			t.Errorf("the event lacks %s:\n%s", want, got)
		}
	}
	for _, absent := range []string{e.AdminToken, "Authorization", `"request"`} {
		if strings.Contains(got, absent) {
			t.Errorf("the event carries %q:\n%s", absent, got)
		}
	}
}
