package schedules_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/native/schedules"
	sched "github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/schedule"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

var idLine = regexp.MustCompile(`id: ([0-9a-f-]{36})`)

func TestScheduleTools(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	var alice, bob string
	err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('A', 'a') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id),
		a AS (INSERT INTO agents (guild_id, name) SELECT id, 'alice' FROM g RETURNING id),
		b AS (INSERT INTO agents (guild_id, name) SELECT id, 'bob' FROM g RETURNING id)
		SELECT a.id, b.id FROM a, b`).Scan(&alice, &bob)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	mgr := &schedule.Manager{Temporal: testtemporal.Client(t), TaskQueue: testtemporal.TaskQueue(t), Log: log}
	reg := tools.NewRegistry(tools.WithLogger(log))
	schedules.Register(reg, schedules.Deps{DB: db, Log: log, Manager: mgr})
	call := func(agent, name string, args any) string {
		b, _ := json.Marshal(args)
		return reg.Invoke(ctx, tools.Call{Name: name, Args: b, AgentID: agent, Trigger: "direct"})
	}

	out := call(alice, schedules.ToolCreateCron, map[string]string{"cron": "0 9 * * 1-5", "description": "weekday digest", "instruction": "Write the digest."})
	m := idLine.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "state: active") || strings.Contains(out, "next_run_at: none") {
		t.Fatalf("create: %s", out)
	}
	id := m[1]
	t.Cleanup(func() { call(alice, schedules.ToolDelete, map[string]string{"id": id}) })

	if out := call(alice, schedules.ToolCreateCron, map[string]string{"cron": "0 0 9 * * *", "description": "d", "instruction": "i"}); !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, "cron: must have 5 fields") {
		t.Fatalf("six fields: %s", out)
	}
	if out := call(alice, schedules.ToolCreateWindow, map[string]any{"timezone": "Europe/Paris", "start": "17:00", "end": "09:00",
		"max_wakes": 2, "description": "d", "instruction": "i"}); !strings.Contains(out, "end: 09:00 is before the start 17:00") {
		t.Fatalf("start after end: %s", out)
	}

	list := call(alice, schedules.ToolList, map[string]any{})
	if !strings.Contains(list, "id: "+id) || !strings.Contains(list, "next_run_at: 20") || !strings.Contains(list, "weekday digest") {
		t.Fatalf("list: %s", list)
	}
	if out := call(bob, schedules.ToolList, map[string]any{}); out != "no schedules" {
		t.Fatalf("bob's list: %s", out)
	}
	// Only the calling agent's own schedules.
	for _, tool := range []string{schedules.ToolPause, schedules.ToolResume, schedules.ToolDelete} {
		if out := call(bob, tool, map[string]string{"id": id}); !strings.Contains(out, "id: you have no schedule") {
			t.Fatalf("bob %s alice's: %s", tool, out)
		}
	}
	if out := call(alice, schedules.ToolPause, map[string]string{"id": id}); !strings.Contains(out, "state: paused · next_run_at: none") {
		t.Fatalf("pause: %s", out)
	}
	if out := call(alice, schedules.ToolResume, map[string]string{"id": id}); !strings.Contains(out, "state: active") || strings.Contains(out, "next_run_at: none") {
		t.Fatalf("resume: %s", out)
	}
	if out := call(alice, schedules.ToolDelete, map[string]string{"id": id}); out != "deleted schedule "+id {
		t.Fatalf("delete: %s", out)
	}
	if out := call(alice, schedules.ToolList, map[string]any{}); out != "no schedules" {
		t.Fatalf("after delete: %s", out)
	}
}

func TestWithoutTemporalTheToolsSaySo(t *testing.T) {
	reg := tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler)))
	schedules.Register(reg, schedules.Deps{})
	out := reg.Invoke(context.Background(), tools.Call{Name: schedules.ToolPause, Args: []byte(`{"id":"x"}`), AgentID: "a"})
	if out != tools.ErrorResult(schedules.ErrNoManager.Error()) {
		t.Fatalf("got %s", out)
	}
	if len(reg.All()) != 6 {
		t.Fatalf("%d tools", len(reg.All()))
	}
}

// A schedule needs a description only: without an instruction, the runs it
// starts open with the description.
func TestScheduleWithoutInstructionOpensWithItsDescription(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	var alice string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('A', 'a') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name) SELECT id, 'alice' FROM g RETURNING id`).Scan(&alice); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	mgr := &schedule.Manager{Temporal: testtemporal.Client(t), TaskQueue: testtemporal.TaskQueue(t), Log: log}
	reg := tools.NewRegistry(tools.WithLogger(log))
	schedules.Register(reg, schedules.Deps{DB: db, Log: log, Manager: mgr})
	out := reg.Invoke(ctx, tools.Call{Name: schedules.ToolCreateCron, AgentID: alice, Trigger: "direct",
		Args: json.RawMessage(`{"cron":"0 9 * * 1","description":"Check the weekly metrics and post a summary"}`)})
	m := idLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create without instruction: %s", out)
	}
	t.Cleanup(func() {
		reg.Invoke(ctx, tools.Call{Name: schedules.ToolDelete, AgentID: alice, Args: json.RawMessage(`{"id":"` + m[1] + `"}`)})
	})
	s, err := sched.Get(ctx, db, m[1])
	if err != nil {
		t.Fatal(err)
	}
	if s.Instruction != "" || s.Opening() != "Check the weekly metrics and post a summary" {
		t.Fatalf("instruction %q, opening %q", s.Instruction, s.Opening())
	}
}
