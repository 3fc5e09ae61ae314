package run_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// A generation of a coding run records its exploration on the run; a run
// without coding records none.
func TestModelTurnRecordsExplorationOfCodingRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	srv := httptest.NewServer(&chatRecorder{})
	t.Cleanup(srv.Close)
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: srv.URL}}
	a := runact.New(runact.Deps{DB: db, Models: res, Log: slog.New(slog.DiscardHandler)})
	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model) VALUES ($1, 'coder', 'openrouter/test-model') RETURNING id`, guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	generation := func(coding bool) runs.Run {
		t.Helper()
		r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct",
			Model: "openrouter/test-model", Budget: 5, Message: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runs.SaveSnapshot(ctx, db, runs.Snapshot{RunID: r.ID, Flags: runs.Flags{Coding: coding}}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for seq, tool := range map[int]string{2: "code_search", 3: "file_write"} {
			if _, _, err := runs.SaveToolCall(ctx, db, runs.ToolCall{RunID: r.ID, Seq: seq, CallID: tool, Tool: tool,
				Arguments: "{}", Result: "ok", Outcome: runs.OutcomeOK, StartedAt: now, FinishedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Model(ctx, runact.ModelInput{RunID: r.ID, Seq: 4}); err != nil {
			t.Fatal(err)
		}
		out, err := runs.Load(ctx, db, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if r := generation(true); r.Exploration == nil || r.Exploration.CallsBeforeFirstEdit == nil || *r.Exploration.CallsBeforeFirstEdit != 1 {
		t.Fatalf("coding run: %+v", r.Exploration)
	}
	if r := generation(false); r.Exploration != nil {
		t.Fatalf("a run without coding has exploration %+v", r.Exploration)
	}
}
