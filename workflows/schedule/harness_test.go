package schedule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	schedact "github.com/guilds/guilds/activities/schedule"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	schedtools "github.com/guilds/guilds/internal/native/schedules"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
	"github.com/guilds/guilds/workflows/schedule"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

// model is an OpenAI-compatible /chat/completions server that answers every
// request with plain text (no tool call), so a run ends after one turn. It
// records each request's opening user message and when it arrived; hold,
// while set, keeps requests waiting until it is closed.
type model struct {
	*httptest.Server
	mu       sync.Mutex
	openings []string
	at       []time.Time
	hold     chan struct{}
	// call, when set, is a tool call (name, JSON arguments) answered to the
	// first request instead of text.
	call [2]string
}

func newModel(t testing.TB) *model {
	m := &model{}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	opening := ""
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			opening = msg.Content
			break
		}
	}
	m.mu.Lock()
	m.openings = append(m.openings, opening)
	m.at = append(m.at, arrived)
	hold := m.hold
	call := m.call
	m.call = [2]string{}
	m.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if call[0] != "" {
		args, _ := json.Marshal(call[1])
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, call[0], args)
		return
	}
	fmt.Fprint(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
}

func (m *model) requests() ([]string, []time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.openings...), append([]time.Time(nil), m.at...)
}

// envs numbers the environments: a benchmark builds one per round, and
// each gets a task queue of its own.
var envs atomic.Int64

type env struct {
	t     testing.TB
	db    *pgxpool.Pool
	c     client.Client
	queue string
	model *model
	agent string
	mgr   *schedule.Manager
}

func quietClient(t testing.TB, namespace string) client.Client {
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newEnv is a database with one agent, a worker running the run and
// schedule workflows on a task queue of the test's own, and a Manager.
func newEnv(t testing.TB, worker bool) *env {
	t.Helper()
	e := &env{t: t, db: testdb.New(t), c: quietClient(t, "default"), queue: fmt.Sprintf("%s-%d", testtemporal.TaskQueue(t), envs.Add(1)), model: newModel(t)}
	ctx := context.Background()
	err := e.db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'ops' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name, model, prompt) SELECT id, 'scout', 'openrouter/test-model', 'You are a test agent.' FROM g RETURNING id`).
		Scan(&e.agent)
	if err != nil {
		t.Fatal(err)
	}
	e.mgr = &schedule.Manager{Temporal: e.c, TaskQueue: e.queue, Log: slog.New(slog.DiscardHandler)}
	if os.Getenv("SCHEDULE_TEST_LOG") != "" {
		e.mgr.Log = slog.Default()
	}
	if worker {
		e.startWorker()
	}
	return e
}

func (e *env) startWorker() {
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("SCHEDULE_TEST_LOG") != "" {
		log = slog.Default()
	}
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key-0123456789"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: e.model.URL}}
	reg := tools.NewRegistry(tools.WithLogger(log))
	schedtools.Register(reg, schedtools.Deps{DB: e.db, Log: log, Manager: e.mgr})
	ra := runact.New(runact.Deps{DB: e.db, Tools: reg, Models: res, Log: log})
	sa := schedact.New(schedact.Deps{DB: e.db, Models: res, Log: log})
	c := e.c
	if os.Getenv("SCHEDULE_TEST_LOG") != "" {
		c = loudClient(e.t)
	}
	w := sdkworker.New(c, e.queue, sdkworker.Options{})
	run.Register(w, ra)
	schedule.Register(w, sa)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func loudClient(t testing.TB) client.Client {
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
