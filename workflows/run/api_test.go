package run_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/usage"
	"github.com/guilds/guilds/workflows/run"
)

// The HTTP surface of runs against a real worker: start, stream, read the
// transcript, list, cancel, and visibility by organisation.
func TestRunsOverHTTP(t *testing.T) {
	t.Parallel()
	c := quietClient(t)
	queue := testtemporal.TaskQueue(t)
	model := newScriptedModel(t,
		turn{Calls: []call{{"echo", `{"text":"over http"}`}}},
		turn{Text: "http done"},
		turn{Calls: []call{{"block", `{}`}}},
	)
	mcpURL := newMCPServer(t).URL
	vars := map[string]string{"OPENROUTER_API_KEY": boxKey}
	e := apitest.New(t, apitest.Options{Env: vars, Tweak: func(d *api.Deps) {
		d.Temporal = c
		d.RunTaskQueue = queue
		d.Models = &models.Resolver{Integrations: integrations.New(func(k string) string { return vars[k] }),
			BaseURLs: map[string]string{models.OpenRouter: model.URL}}
	}})
	if _, err := e.DB.Exec(context.Background(), sideEffectsTable); err != nil {
		t.Fatal(err)
	}
	a, closeMCP := activitiesFor(e.DB, t.TempDir(), model.URL, mcpURL, slog.New(slog.DiscardHandler))
	w := sdkworker.New(c, queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); closeMCP() })

	org, _, agent := e.Hierarchy()
	op := e.Operator(org)
	outsider := e.Operator("")

	if r := e.Do(op, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "hi", "trigger": "nope"}); r.Status != 422 {
		t.Fatalf("bad trigger = %d %s", r.Status, r.Body)
	}
	// Refused starts name the field and leave no run behind.
	for _, bad := range []struct {
		who    string
		body   any
		status int
		field  string
	}{
		{op, map[string]any{"message": "   "}, 422, "message"},
		{op, map[string]any{"message": "hi", "budget": 501}, 422, "budget"},
		{op, map[string]any{"message": "hi", "budget": -1}, 422, "budget"},
		{op, map[string]any{"message": strings.Repeat("x", run.MaxMessage+1)}, 422, "message"},
		{outsider, map[string]any{"message": "hi"}, 404, ""},
	} {
		r := e.Do(bad.who, "POST", "/api/agents/"+agent+"/runs", bad.body)
		if r.Status != bad.status || !strings.Contains(string(r.Body), bad.field) {
			t.Errorf("start with %.60v = %d %s", bad.body, r.Status, r.Body)
		}
	}
	if r := e.Do(op, "POST", "/api/agents/00000000-0000-0000-0000-000000000000/runs", map[string]any{"message": "hi"}); r.Status != 404 {
		t.Errorf("start of a missing agent = %d", r.Status)
	}
	if n := e.Count("runs"); n != 0 {
		t.Fatalf("refused starts stored %d runs", n)
	}
	r := e.Do(op, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "say it over http", "budget": 5})
	if r.Status != 201 {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	id := r.Map()["id"].(string)
	if r.Map()["model"] != "openrouter/test-model" && r.Map()["model"] != "openrouter/openai/gpt-4o-mini" {
		t.Fatalf("model = %v", r.Map()["model"])
	}
	if r := e.Do(outsider, "GET", "/api/runs/"+id, nil); r.Status != 404 {
		t.Fatalf("outsider sees the run: %d", r.Status)
	}

	// The event stream ends with the run and carries every message.
	req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/runs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "event: ") {
			events = append(events, strings.TrimPrefix(line, "event: "))
		} else if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"status":"completed"`) {
			events = append(events, "completed")
		}
	}
	resp.Body.Close()
	msgs := 0
	for _, ev := range events {
		if ev == "message" {
			msgs++
		}
	}
	if msgs != 4 || events[len(events)-1] != "completed" {
		t.Fatalf("events = %v", events)
	}

	r = e.Do(op, "GET", "/api/runs/"+id, nil)
	var tr runs.Transcript
	r.JSON(&tr)
	if r.Status != 200 || tr.Run.Status != runs.StatusCompleted || len(tr.Messages) != 4 || len(tr.ToolCalls) != 1 ||
		!strings.Contains(tr.ToolCalls[0].Result, "echo: over http") || tr.Run.Remaining != 4 {
		t.Fatalf("transcript = %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), `"report_issue"`) {
		t.Fatalf("offered tools missing report_issue: %s", r.Body)
	}
	// The run's usage: the scripted model reports 10 + 5 tokens a turn; no
	// price is set, so both turns are unpriced.
	var withUsage struct{ Usage usage.RunUsage }
	r.JSON(&withUsage)
	if u := withUsage.Usage; u.PromptTokens != 20 || u.CompletionTokens != 10 || len(u.Turns) != 2 || u.Unpriced != 2 || len(u.Costs) != 0 {
		t.Fatalf("usage = %+v", u)
	}
	if r := e.Do(op, "POST", "/api/runs/"+id+"/cancel", nil); r.Status != 409 {
		t.Fatalf("cancel of an ended run = %d", r.Status)
	}
	if r := e.Do(outsider, "POST", "/api/runs/"+id+"/cancel", nil); r.Status != 404 {
		t.Fatalf("outsider cancel = %d", r.Status)
	}
	if r := e.Do(outsider, "GET", "/api/runs/"+id+"/events", nil); r.Status != 404 {
		t.Fatalf("outsider events = %d", r.Status)
	}
	if r := e.Do(op, "GET", "/api/runs/"+id+"/events?after=x", nil); r.Status != 400 {
		t.Fatalf("events with a bad after = %d", r.Status)
	}
	// Resuming after the assistant's tool call sends only what followed it.
	if r := e.Do(op, "GET", "/api/runs/"+id+"/events?after=2", nil); r.Status != 200 ||
		strings.Count(string(r.Body), "event: message") != 2 || strings.Contains(string(r.Body), "say it over http") {
		t.Fatalf("events after 2 = %d %s", r.Status, r.Body)
	}
	// A reconnecting EventSource resumes from its Last-Event-ID the same way.
	resume := func(lastID string) (int, string) {
		req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/runs/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+op)
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := resume("2"); code != 200 || strings.Count(body, "event: message") != 2 || strings.Contains(body, "say it over http") {
		t.Fatalf("events from Last-Event-ID 2 = %d %s", code, body)
	}
	if code, body := resume("two"); code != 400 || !strings.Contains(body, "Last-Event-ID") {
		t.Fatalf("a bad Last-Event-ID = %d %s", code, body)
	}

	// A second run blocks in a tool; cancelling it ends it cancelled.
	r = e.Do(op, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "wait"})
	id2 := r.Map()["id"].(string)
	deadline := time.Now().Add(time.Minute)
	for e.Count("test_executions") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the block tool never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := e.Do(op, "POST", "/api/runs/"+id2+"/cancel", nil); r.Status != 202 {
		t.Fatalf("cancel = %d %s", r.Status, r.Body)
	}
	for {
		r = e.Do(op, "GET", "/api/runs/"+id2, nil)
		r.JSON(&tr)
		if tr.Run.Status == runs.StatusCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not cancelled: %s", tr.Run.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var list []runs.Run
	r = e.Do(op, "GET", "/api/agents/"+agent+"/runs", nil)
	r.JSON(&list)
	if len(list) != 2 || list[0].ID != id2 {
		t.Fatalf("list = %s", r.Body)
	}
}
