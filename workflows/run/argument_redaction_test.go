package run_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/notes"
	"github.com/guilds/guilds/internal/native/secrets"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/run"
)

// TestStoredSecretStaysOutOfLaterArguments: the agent keeps a value with
// secret_store, and a later turn writes it into a note and into another
// call's arguments and its text. Neither the transcript (GET /api/runs/{id}),
// the note nor the run's Temporal history holds the value in clear.
func TestStoredSecretStaysOutOfLaterArguments(t *testing.T) {
	t.Parallel()
	const minted = "sk-minted-9f8e7d6c5b4a"
	c := quietClient(t)
	queue := testtemporal.TaskQueue(t)
	model := newScriptedModel(t,
		turn{Calls: []call{{"secret_store", `{"name":"MINTED_KEY","value":"` + minted + `"}`}}},
		turn{Text: "saving " + minted, Calls: []call{
			{"note_write", `{"level":"agent","key":"keys.md","content":"the key is ` + minted + `"}`},
			{"echo", `{"text":"key ` + minted + `"}`},
		}},
		turn{Text: "done"},
	)
	entry, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"OPENROUTER_API_KEY": boxKey}
	res := &models.Resolver{Integrations: integrations.New(func(k string) string { return vars[k] }),
		BaseURLs: map[string]string{models.OpenRouter: model.URL}}
	e := apitest.New(t, apitest.Options{Env: vars, Tweak: func(d *api.Deps) {
		d.Temporal = c
		d.RunTaskQueue = queue
		d.Models = res
	}})
	if _, err := e.DB.Exec(context.Background(), sideEffectsTable); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	reg := testRegistry(e.DB, t.TempDir(), log)
	secrets.Register(reg, secrets.Deps{DB: e.DB, Keyring: kr, Log: log})
	notes.Register(reg, notes.Deps{DB: e.DB, Log: log})
	a := runact.New(runact.Deps{DB: e.DB, Tools: reg, Offerer: runact.NativeOfferer{Tools: reg}, Models: res, Log: log,
		Secrets: runact.Secrets{fixedSecrets{mcpSecret, boxKey}, agentsecrets.Source{DB: e.DB, Keyring: kr}},
		Vault:   agentsecrets.Vault{DB: e.DB, Keyring: kr}, Heartbeat: 200 * time.Millisecond})
	w := sdkworker.New(c, queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	org, _, agent := e.Hierarchy()
	op := e.Operator(org)
	r := e.Do(op, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "mint a key and keep it"})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	runID := r.Map()["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var result run.Result
	if err := c.GetWorkflow(ctx, run.WorkflowID(runID), "").Get(ctx, &result); err != nil {
		t.Fatal(err)
	}

	// The run records who started it: a secret request of the run asks them (ADR 0902).
	var startedBy string
	if err := e.DB.QueryRow(ctx, `SELECT started_by FROM runs WHERE id = $1`, runID).Scan(&startedBy); err != nil || startedBy == "" {
		t.Errorf("the run does not record who started it (%q, %v)", startedBy, err)
	}

	tr := e.Do(op, "GET", "/api/runs/"+runID, nil)
	if tr.Status != 200 || !strings.Contains(string(tr.Body), "note_write") {
		t.Fatalf("transcript: %d %s", tr.Status, tr.Body)
	}
	if strings.Contains(string(tr.Body), minted) {
		t.Errorf("the transcript holds the stored secret: %s", tr.Body)
	}
	var stored int
	if err := e.DB.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE kind = 'note' AND content LIKE '%' || $1 || '%'`, minted).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Error("the note holds the stored secret")
	}
	var events int
	it := c.GetWorkflowHistory(ctx, run.WorkflowID(runID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		events++
		if bytes.Contains(raw, []byte(minted)) {
			t.Errorf("history event %d (%s) holds the stored secret", ev.GetEventId(), ev.GetEventType())
		}
	}
	if events == 0 {
		t.Fatal("no history read")
	}
}
