package group_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	groupact "github.com/guilds/guilds/activities/group"
	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/group"
	"github.com/guilds/guilds/workflows/run"
	"github.com/guilds/guilds/workflows/schedule"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

// groupSecret is a credential in the run's redaction set: it must never
// reach the chat.
const groupSecret = "sk-group-secret-5d1e9a77c2"

// ---- scripted agent model ------------------------------------------------------

// reply is one scripted model answer: text, or one tool call.
type reply struct {
	Text     string
	Tool     string
	ToolArgs string
}

// agentRequest is one request the agent model received.
type agentRequest struct {
	Agent   string   // from the opening message's "You are @name"
	N       int      // this agent's request number, from 0
	Opening string   // the run's first user message
	Tools   []string // offered tool names
	At      time.Time
}

// agentModel is an OpenAI-compatible /chat/completions server playing every
// agent: it tells them apart by the opening message of their run and asks
// script for each answer. Until release is closed (when set) every request
// waits for it.
type agentModel struct {
	*httptest.Server
	script func(r agentRequest) reply

	mu       sync.Mutex
	requests []agentRequest
	perAgent map[string]int
	arrived  chan agentRequest // receives every request as it arrives, when set
	release  chan struct{}
}

var youAre = regexp.MustCompile(`You are @([\w.-]+)`)

func newAgentModel(t testing.TB, script func(r agentRequest) reply) *agentModel {
	m := &agentModel{script: script, perAgent: map[string]int{}}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *agentModel) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
		Tools    []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	ar := agentRequest{At: at}
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			ar.Opening = msg.Content
			break
		}
	}
	if sm := youAre.FindStringSubmatch(ar.Opening); sm != nil {
		ar.Agent = sm[1]
	}
	for _, t := range req.Tools {
		ar.Tools = append(ar.Tools, t.Function.Name)
	}
	m.mu.Lock()
	ar.N = m.perAgent[ar.Agent]
	m.perAgent[ar.Agent]++
	m.requests = append(m.requests, ar)
	arrived, release := m.arrived, m.release
	m.mu.Unlock()
	if arrived != nil {
		arrived <- ar
	}
	if release != nil {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	}
	rp := m.script(ar)
	msg := map[string]any{"role": "assistant", "content": rp.Text}
	finish := "stop"
	if rp.Tool != "" {
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%s_%d", ar.Agent, ar.N), "type": "function",
			"function": map[string]any{"name": rp.Tool, "arguments": rp.ToolArgs}}}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1}})
}

func (m *agentModel) Requests() []agentRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agentRequest(nil), m.requests...)
}

// text is a script that answers every turn with one line naming the agent.
func text(r agentRequest) reply { return reply{Text: r.Agent + " here"} }

// ---- scripted router -------------------------------------------------------------

// routerModel plays the TYPESAFE routing model over HTTP: answer returns the
// status and the structured output's content of each request.
type routerModel struct {
	*httptest.Server
	answer func(n int, body map[string]any) (int, string)
	calls  atomic.Int32
	bodies chan map[string]any
}

func newRouter(t testing.TB, answer func(n int, body map[string]any) (int, string)) *routerModel {
	rm := &routerModel{answer: answer, bodies: make(chan map[string]any, 100)}
	rm.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer ts-router-key-0123456789" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusUnauthorized)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		select {
		case rm.bodies <- body:
		default:
		}
		n := int(rm.calls.Add(1)) - 1
		status, content := rm.answer(n, body)
		if status == 0 {
			<-r.Context().Done() // never answers
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			fmt.Fprint(w, `{"error":{"message":"router unavailable"}}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
			"message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(rm.Close)
	return rm
}

func (rm *routerModel) router(timeout time.Duration) *groupchat.Router {
	return &groupchat.Router{BaseURL: rm.URL, Key: "ts-router-key-0123456789", Model: "route-test", Timeout: timeout}
}

// ---- environment ---------------------------------------------------------------------

type fixedSecrets []string

func (s fixedSecrets) RunSecrets(context.Context, string) ([]string, error) { return s, nil }

var envs atomic.Int64

type env struct {
	t      testing.TB
	db     *pgxpool.Pool
	c      client.Client
	queue  string
	model  *agentModel
	org    string
	guild  string
	agents map[string]string // name → id
	svc    group.Service
	user   string
}

type envOptions struct {
	router    *groupchat.Router
	maxHops   int
	limits    groupchat.Limits
	schedules bool // offer working schedule tools (Temporal schedules on the test's queue)
	noWorker  bool
}

func quietClient(t testing.TB) client.Client {
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: "default",
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newEnv is a database with a guild of the named agents, its platform
// bindings seeded, and a worker running the run and route workflows with
// the platform's native tools on a task queue of the test's own.
func newEnv(t testing.TB, o envOptions, script func(agentRequest) reply, names ...string) *env {
	t.Helper()
	e := &env{t: t, db: testdb.New(t), c: quietClient(t), agents: map[string]string{},
		queue: fmt.Sprintf("%s-%d", testtemporal.TaskQueue(t), envs.Add(1)), model: newAgentModel(t, script)}
	ctx := context.Background()
	if err := e.db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org).Scan(&e.guild); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO users (name) VALUES ('Dana') RETURNING id`).Scan(&e.user); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		var id string
		if err := e.db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, $2, 'openrouter/test-model', 'You help the team.') RETURNING id`,
			e.guild, n).Scan(&id); err != nil {
			t.Fatal(err)
		}
		e.agents[n] = id
	}
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	e.svc = group.Service{DB: e.db, Temporal: e.c, TaskQueue: e.queue}
	if !o.noWorker {
		e.startWorker(o)
	}
	return e
}

func (e *env) resolver() *models.Resolver {
	return &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key-0123456789"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: e.model.URL}}
}

// startWorker starts a worker as the platform assembles one; the returned
// function stops it.
func (e *env) startWorker(o envOptions) func() {
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("GROUP_TEST_LOG") != "" {
		log = slog.Default()
	}
	secrets := fixedSecrets{groupSecret}
	integ := integrations.New(func(string) string { return "" })
	opts := []native.Option{native.WithGroupChat(e.svc, secrets), native.WithGroupLimits(o.limits)}
	if o.schedules {
		opts = append(opts, native.WithSchedules(&schedule.Manager{Temporal: e.c, TaskQueue: e.queue, Log: log}))
	}
	reg := native.Registry(e.db, log, opts...)
	res := e.resolver()
	ra := runact.New(runact.Deps{DB: e.db, Tools: reg, Offerer: runact.GrantsOfferer{S: grants.NewService(reg, integ, log)},
		Models: res, Secrets: secrets, Log: log})
	ga := groupact.New(groupact.Deps{DB: e.db, Decider: groupchat.Decider{Router: o.router, MaxHops: o.maxHops, Limits: o.limits},
		Models: res, Poster: e.svc, Secrets: secrets, Log: log})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{WorkerStopTimeout: time.Second})
	run.Register(w, ra)
	group.Register(w, ga)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	e.t.Cleanup(stop)
	return stop
}

// post stores an operator's message and starts its routing, as the API does.
func (e *env) post(content string) groupchat.Message {
	e.t.Helper()
	var m groupchat.Message
	err := store.InTx(context.Background(), e.db, func(tx pgx.Tx) error {
		var err error
		m, err = e.svc.PostOperator(context.Background(), tx, e.guild, e.user, content)
		return err
	})
	if err != nil {
		e.t.Fatalf("post: %v", err)
	}
	return m
}

// chat is the guild's whole chat, oldest first.
func (e *env) chat() []groupchat.Message {
	e.t.Helper()
	msgs, _, err := groupchat.List(context.Background(), e.db, e.guild, groupchat.Page{Limit: groupchat.MaxLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	return msgs
}

// waitRoute waits for a message's Route workflow to end.
func (e *env) waitRoute(messageID string) group.Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res group.Result
	if err := e.c.GetWorkflow(ctx, group.WorkflowID(messageID), "").Get(ctx, &res); err != nil {
		e.t.Fatalf("route of %s: %v", messageID, err)
	}
	return res
}

// settle waits until every message of the chat has been routed and every
// Route has ended, so the chat stops growing.
func (e *env) settle() []groupchat.Message {
	e.t.Helper()
	done := map[string]bool{}
	for {
		msgs := e.chat()
		pending := false
		for _, m := range msgs {
			if !done[m.ID] {
				e.waitRoute(m.ID)
				done[m.ID] = true
				pending = true
			}
		}
		if !pending {
			return e.chat()
		}
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

func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
