package githubinstall_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	acts "github.com/guilds/guilds/activities/githubinstall"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	gi "github.com/guilds/guilds/workflows/githubinstall"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

type env struct {
	db    *pgxpool.Pool
	gh    *githubtest.Server
	kr    *secret.Keyring
	c     client.Client
	queue string
	org   string
	acts  *acts.Activities
	w     worker.Worker
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{db: testdb.New(t), gh: githubtest.New(t), c: testtemporal.Client(t), queue: testtemporal.TaskQueue(t)}
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, e.db, ms); err != nil {
		t.Fatal(err)
	}
	k, _ := secret.GenerateKey("k1")
	if e.kr, err = secret.ParseKeyring(k); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id::text`).Scan(&e.org); err != nil {
		t.Fatal(err)
	}
	reg := integrations.New(e.gh.Getenv)
	a := &acts.Activities{DB: e.db, Keyring: e.kr, Log: slog.New(slog.DiscardHandler), App: func() (*githubapp.Client, error) {
		cfg, err := githubapp.FromRegistry(reg)
		return &githubapp.Client{Config: cfg}, err
	}}
	e.acts = a
	e.startWorker(t)
	return e
}

func (e *env) startWorker(t *testing.T) {
	t.Helper()
	e.w = worker.New(e.c, e.queue, worker.Options{})
	gi.Register(e.w, e.acts)
	if err := e.w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.w.Stop)
}

const redirect = "http://127.0.0.1:9/api/mcp/oauth/callback"

// begin opens a pending github login of the organisation and starts its
// workflow, as Connect does; it answers the connection id and the state.
func (e *env) begin(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	id := connectionstest.InsertOf(t, e.db, "github", "organisation", e.org)
	state, err := githubapp.BeginPending(ctx, e.db, id, redirect)
	if err != nil {
		t.Fatal(err)
	}
	if err := gi.Start(ctx, e.c, e.queue, gi.Input{ConnectionID: id, Deadline: time.Minute}); err != nil {
		t.Fatal(err)
	}
	return id, state
}

func (e *env) send(t *testing.T, id, update string, p acts.CallbackParams) gi.Step {
	t.Helper()
	sealed, err := acts.Seal(e.kr, id, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	step, err := gi.Send(ctx, e.c, id, update, gi.Callback{Sealed: sealed})
	if err != nil {
		t.Fatal(err)
	}
	return step
}

func TestInstallCallbackWithInstallationIDConnects(t *testing.T) {
	e := newEnv(t)
	inst := e.gh.AddInstallation("acme-gh")
	e.gh.AddUser("octo", inst)
	id, state := e.begin(t)
	step := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: e.gh.Code("octo"), InstallationID: inst})
	if step.Status != gi.StatusConnected || step.Account != "acme-gh" {
		t.Fatalf("step = %+v", step)
	}
	c := connectionstest.Get(t, e.db, id)
	if c.Status != "connected" || c.AccountHint != "acme-gh" {
		t.Fatalf("login = %+v", c)
	}
	l, err := githubapp.GetLogin(context.Background(), e.db, id)
	if err != nil || l.InstallationID != inst {
		t.Fatalf("github login = %+v, %v", l, err)
	}
	var bound bool
	if err := e.db.QueryRow(context.Background(), `SELECT enabled FROM bindings WHERE connection_id = $1`, id).Scan(&bound); err != nil || !bound {
		t.Fatalf("binding: %v %v", bound, err)
	}
	// The state is single use: a replay is refused and changes nothing.
	if _, err := githubapp.FindPending(context.Background(), e.db, state); err == nil {
		t.Fatal("the state survived the login")
	}
}

func TestForgedInstallationIDIsRefusedAndNothingStored(t *testing.T) {
	e := newEnv(t)
	mine := e.gh.AddInstallation("acme-gh")
	theirs := e.gh.AddInstallation("victim")
	e.gh.AddUser("octo", mine)
	id, state := e.begin(t)
	step := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: e.gh.Code("octo"), InstallationID: theirs})
	if step.Status != gi.StatusRefused {
		t.Fatalf("step = %+v", step)
	}
	if connectionstest.Exists(t, e.db, id) {
		t.Fatal("the refused new login was kept")
	}
	var n int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM github_logins`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("github_logins = %d, %v", n, err)
	}
}

func TestSeveralInstallationsOpenThePicker(t *testing.T) {
	e := newEnv(t)
	a, b := e.gh.AddInstallation("acme-gh"), e.gh.AddInstallation("beta-gh")
	e.gh.AddUser("octo", a, b)
	id, state := e.begin(t)
	step := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: e.gh.Code("octo")})
	if step.Status != gi.StatusChoose || step.Choices != 2 {
		t.Fatalf("step = %+v", step)
	}
	p, err := githubapp.FindPending(context.Background(), e.db, state)
	if err != nil || len(p.Choices) != 2 {
		t.Fatalf("choices = %+v, %v", p, err)
	}
	step = e.send(t, id, gi.UpdateChoice, acts.CallbackParams{State: state, Account: "beta-gh"})
	if step.Status != gi.StatusConnected || step.Account != "beta-gh" {
		t.Fatalf("choice = %+v", step)
	}
	if l, err := githubapp.GetLogin(context.Background(), e.db, id); err != nil || l.InstallationID != b {
		t.Fatalf("login = %+v, %v", l, err)
	}
}

func TestSetupRedirectHintAndOnlyInstallation(t *testing.T) {
	e := newEnv(t)
	a := e.gh.AddInstallation("acme-gh")
	e.gh.AddUser("octo", a)
	id, state := e.begin(t)
	// A setup redirect named the installation; the code comes after user authorization.
	if err := githubapp.SetHint(context.Background(), e.db, state, a); err != nil {
		t.Fatal(err)
	}
	step := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: e.gh.Code("octo")})
	if step.Status != gi.StatusConnected || step.Account != "acme-gh" {
		t.Fatalf("step = %+v", step)
	}
}

func TestRequestedInstallKeepsThePendingLogin(t *testing.T) {
	e := newEnv(t)
	id, _ := e.begin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	step, err := gi.Send(ctx, e.c, id, gi.UpdateCallback, gi.Callback{Requested: true})
	if err != nil || step.Status != gi.StatusRequested {
		t.Fatalf("step = %+v, %v", step, err)
	}
	if connectionstest.Status(t, e.db, id) != "pending" {
		t.Fatal("the login is not pending")
	}
}

func TestForgedCodeIsRefused(t *testing.T) {
	e := newEnv(t)
	e.gh.AddUser("octo", e.gh.AddInstallation("acme-gh"))
	id, state := e.begin(t)
	if step := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: "forged"}); step.Status != gi.StatusRefused {
		t.Fatalf("step = %+v", step)
	}
	if connectionstest.Exists(t, e.db, id) {
		t.Fatal("kept")
	}
}

// An install waiting for GitHub outlives the worker: a new worker takes the
// callback and connects the login.
func TestInstallSurvivesAWorkerRestart(t *testing.T) {
	e := newEnv(t)
	inst := e.gh.AddInstallation("acme-gh")
	e.gh.AddUser("octo", inst)
	id, state := e.begin(t)
	e.w.Stop()
	e.startWorker(t)
	if s := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: e.gh.Code("octo")}); s.Status != gi.StatusConnected {
		t.Fatalf("step %+v", s)
	}
}
