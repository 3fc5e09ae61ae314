package api_test

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/serviceerror"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/schedule"
)

// Operators list, pause, resume, trigger and delete an agent's schedules;
// an outsider sees none of it; deleting the agent removes its Temporal
// schedules.
func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	tc := testtemporal.Client(t)
	queue := testtemporal.TaskQueue(t)
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.Temporal = tc; d.RunTaskQueue = queue }})
	org, _, agent := e.Hierarchy()
	op, other := e.Operator(org), e.Operator("")
	ctx := context.Background()
	mgr := &schedule.Manager{Temporal: tc, TaskQueue: queue}
	s, err := mgr.Create(ctx, e.DB, schedules.New{AgentID: agent, Kind: schedules.KindCron, Cron: "30 7 * * *",
		Description: "morning", Instruction: "Good morning."})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s.ID)).Delete(ctx) })

	var list []schedules.Schedule
	r := e.Do(op, "GET", "/api/agents/"+agent+"/schedules", nil)
	r.JSON(&list)
	if r.Status != 200 || len(list) != 1 || list[0].ID != s.ID || list[0].NextRunAt == nil {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if r := e.Do(other, "GET", "/api/agents/"+agent+"/schedules", nil); r.Status != 404 {
		t.Fatalf("outsider list: %d", r.Status)
	}
	for _, action := range []string{"pause", "resume", "trigger"} {
		if r := e.Do(other, "POST", "/api/schedules/"+s.ID+"/"+action, nil); r.Status != 404 {
			t.Fatalf("outsider %s: %d", action, r.Status)
		}
	}
	var got schedules.Schedule
	r = e.Do(op, "POST", "/api/schedules/"+s.ID+"/pause", nil)
	r.JSON(&got)
	if r.Status != 200 || got.State != schedules.StatePaused || got.NextRunAt != nil {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	r = e.Do(op, "POST", "/api/schedules/"+s.ID+"/resume", nil)
	r.JSON(&got)
	if r.Status != 200 || got.State != schedules.StateActive || got.NextRunAt == nil {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "POST", "/api/schedules/"+s.ID+"/trigger", nil); r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "DELETE", "/api/schedules/"+s.ID, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "DELETE", "/api/schedules/"+s.ID, nil); r.Status != 404 {
		t.Fatalf("delete again: %d", r.Status)
	}
	var nf *serviceerror.NotFound
	if _, err := tc.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s.ID)).Describe(ctx); !errors.As(err, &nf) {
		t.Fatalf("Temporal schedule after delete: %v", err)
	}

	// Deleting the agent deletes its schedules in Temporal.
	s2, err := mgr.Create(ctx, e.DB, schedules.New{AgentID: agent, Kind: schedules.KindCron, Cron: "0 12 * * *",
		Description: "noon", Instruction: "Lunch."})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Do(op, "DELETE", "/api/agents/"+agent, nil); r.Status != 204 {
		t.Fatalf("delete agent: %d %s", r.Status, r.Body)
	}
	if _, err := tc.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s2.ID)).Describe(ctx); !errors.As(err, &nf) {
		t.Fatalf("Temporal schedule after the agent's delete: %v", err)
	}
}
