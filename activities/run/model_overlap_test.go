package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// heldProvider answers /chat/completions with a secret_store call whose
// arguments name the request; the first request waits until release closes.
type heldProvider struct {
	mu       sync.Mutex
	n        int
	arrived  chan struct{}
	release  chan struct{}
	requests int
}

func (p *heldProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	p.mu.Lock()
	n := p.n
	p.n++
	p.requests++
	p.mu.Unlock()
	if n == 0 {
		close(p.arrived)
		<-p.release
	}
	args, _ := json.Marshal(fmt.Sprintf(`{"name":"K","value":"attempt-%d"}`, n))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"answer %d",
		"tool_calls":[{"id":"call-%d","type":"function","function":{"name":"secret_store","arguments":%s}}]},"finish_reason":"tool_calls"}]}`, n, n, args)
}

// recordingVault seals nothing; it records which call ids were handed to it.
type recordingVault struct {
	mu  sync.Mutex
	ids []string
}

func (v *recordingVault) Sealed(tool string) bool { return tool == "secret_store" }
func (v *recordingVault) Hide(_ context.Context, _ string, _ int, callID, _ string) (string, []string, error) {
	v.mu.Lock()
	v.ids = append(v.ids, callID)
	v.mu.Unlock()
	return `{"name":"K","value":"[REDACTED]"}`, nil, nil
}
func (v *recordingVault) Reveal(context.Context, string, int, string) (string, []string, bool, error) {
	return "", nil, false, nil
}
func (v *recordingVault) Forget(context.Context, string, int) error { return nil }

// Two attempts of one model turn overlap (the first one's worker stalled
// past the heartbeat timeout and the turn was retried elsewhere): the answer
// stored first is the turn's. The late attempt returns it, does not store its
// own and does not seal its own arguments over the stored answer's.
func TestOverlappingModelAttemptsStoreOneAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	prov := &heldProvider{arrived: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(prov)
	t.Cleanup(srv.Close)
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: srv.URL}}
	vault := &recordingVault{}
	a := runact.New(runact.Deps{DB: db, Models: res, Vault: vault, Log: slog.New(slog.DiscardHandler)})

	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'p') RETURNING id`,
		guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct",
		Model: "openrouter/test-model", Budget: 5, Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	store := runs.OfferedTool{Name: "secret_store", Kind: "native", Description: "store a secret",
		Schema: json.RawMessage(`{"type":"object"}`), ShapedSchema: json.RawMessage(`{"type":"object"}`), Class: "default"}
	if _, err := runs.SaveSnapshot(ctx, db, runs.Snapshot{RunID: r.ID, Tools: []runs.OfferedTool{store}}); err != nil {
		t.Fatal(err)
	}

	in := runact.ModelInput{RunID: r.ID, Seq: 2}
	late := make(chan runact.ModelOutput, 1)
	go func() {
		out, err := a.Model(ctx, in)
		if err != nil {
			t.Error(err)
		}
		late <- out
	}()
	<-prov.arrived // the first attempt waits on the provider
	retry, err := a.Model(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	close(prov.release)
	first := <-late

	if retry.Text != "answer 1" || len(retry.Calls) != 1 || retry.Calls[0].ID != "call-1" {
		t.Fatalf("retry = %+v", retry)
	}
	if first.Text != retry.Text || first.Seq != retry.Seq || len(first.Calls) != 1 || first.Calls[0].ID != "call-1" {
		t.Fatalf("the late attempt returned %+v, not the stored answer %+v", first, retry)
	}
	msgs, err := runs.Messages(ctx, db, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Content != "answer 1" {
		t.Fatalf("messages %+v", msgs)
	}
	vault.mu.Lock()
	defer vault.mu.Unlock()
	if len(vault.ids) != 1 || vault.ids[0] != "call-1" {
		t.Fatalf("sealed %v, want only the stored answer's call-1", vault.ids)
	}
	if prov.requests != 2 {
		t.Fatalf("provider asked %d times", prov.requests)
	}
}
