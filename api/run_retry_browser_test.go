package api_test

import (
	"net"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/run"
)

// retryBoxKey is the box's model key; it must show nowhere.
const retryBoxKey = "sk-or-retry-box-key-0123456789"

// TestRetryingModelShowsInChromium (issue 34 item 3): a run whose model
// cannot be reached is retried by Temporal; the run API reads the pending
// model turn from the workflow (attempt, last error, next try) and the run
// page says so, as the Temporal UI would, without the key.
func TestRetryingModelShowsInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	// A model address nothing listens on: every turn is refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"OPENROUTER_API_KEY": retryBoxKey}
	res := &models.Resolver{Integrations: integrations.New(func(k string) string { return vars[k] }),
		BaseURLs: map[string]string{models.OpenRouter: dead}}
	c := testtemporal.Client(t)
	queue := testtemporal.TaskQueue(t)
	e := apitest.New(t, apitest.Options{Env: vars, Tweak: func(d *api.Deps) {
		d.Temporal, d.RunTaskQueue, d.Models = c, queue, res
	}})
	w := sdkworker.New(c, queue, sdkworker.Options{})
	run.Register(w, runact.New(runact.Deps{DB: e.DB, Models: res}))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	org, _, agent := e.Hierarchy()
	op := e.Operator(org)
	r := e.Do(op, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Summarise the week", "budget": 5})
	if r.Status != 201 {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	id := r.Map()["id"].(string)
	t.Cleanup(func() { e.Do(op, "POST", "/api/runs/"+id+"/cancel", nil) })

	// Wait for the state: the model turn pending on a second (or later)
	// attempt, with its next try scheduled. The bound is only a failure bound.
	var got struct {
		Steps []struct {
			Step          string     `json:"step"`
			Attempt       int        `json:"attempt"`
			LastFailure   string     `json:"last_failure"`
			NextAttemptAt *time.Time `json:"next_attempt_at"`
		} `json:"steps"`
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		reply := e.Do(op, "GET", "/api/runs/"+id+"/activity", nil)
		if reply.Status != 200 {
			t.Fatalf("activity = %d %s", reply.Status, reply.Body)
		}
		if strings.Contains(string(reply.Body), retryBoxKey) {
			t.Fatalf("the activity reply carries the model key: %s", reply.Body)
		}
		reply.JSON(&got)
		if len(got.Steps) == 1 && got.Steps[0].Step == "model turn" && got.Steps[0].Attempt >= 2 &&
			got.Steps[0].LastFailure != "" && got.Steps[0].NextAttemptAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retried model turn: %s", reply.Body)
		}
		time.Sleep(100 * time.Millisecond) // a re-check of the state, not a wait for time
	}
	t.Logf("pending model turn: %+v", got.Steps[0])
	if outsider := e.Operator(""); e.Do(outsider, "GET", "/api/runs/"+id+"/activity", nil).Status != 404 {
		t.Errorf("an outsider reads the run's activity")
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.viewport(1280, 800)
	b.open("/signin")
	b.typeIn(`input[name="token"]`, op)
	b.clickText("form", "API token", "Sign in")
	b.waitText("h1", "Organisations")
	b.open("/runs/" + id)
	trying := `section[aria-label="What the run is trying now"]`
	b.waitText(trying, "The model did not answer; retrying")
	b.waitText(trying, "attempt ")
	b.waitText(trying, "of 8")
	b.waitText(trying, "Last error:")
	b.waitText(trying, "connection refused")
	b.screenshot("run-retrying.png")
	if page := b.eval(`document.documentElement.outerHTML`); strings.Contains(page, retryBoxKey) {
		t.Errorf("the run page shows the model key")
	}
}
