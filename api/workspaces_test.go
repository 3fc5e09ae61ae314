package api_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// orders listens on the workers' stop channel as a worker would.
func orders(t *testing.T) <-chan stopbus.Order {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	out := make(chan stopbus.Order, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stopbus.Listen(ctx, rdb, slog.New(slog.DiscardHandler), ready, func(_ context.Context, o stopbus.Order) { out <- o })
	}()
	t.Cleanup(func() { cancel(); <-done; _ = rdb.Close() })
	select {
	case <-ready:
	case <-done:
		t.Fatal("could not subscribe to the stop channel")
	}
	return out
}

// nextOrderFor waits for an order naming agent (other tests share the
// channel, so orders for other agents are skipped).
func nextOrderFor(t *testing.T, ch <-chan stopbus.Order, agent string) stopbus.Order {
	t.Helper()
	timeout := time.After(time.Minute) // a bound for a broken test, not a measure
	for {
		select {
		case o := <-ch:
			if slices.Contains(o.Agents, agent) {
				return o
			}
		case <-timeout:
			t.Fatalf("no stop order for agent %s", agent)
		}
	}
}

// Deleting an agent, a guild or an organisation tells the workers to remove
// the sandboxes and homes of every agent it takes with it; turning a
// sandbox tool off stops the sandbox; an operator can stop or reset one.
func TestDecisionsEndTheAgentsWorkspaces(t *testing.T) {
	t.Parallel()
	ch := orders(t)
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, agentID := e.Hierarchy()
	newAgent := func(guild, name string) string {
		r := e.Admin("POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": name, "config": map[string]any{"coding": true}})
		if r.Status != 201 {
			t.Fatalf("agent: %d %s", r.Status, r.Body)
		}
		return r.Map()["id"].(string)
	}
	inGuild := newAgent(guildID, "In the guild")
	r := e.Admin("POST", "/api/orgs/"+orgID+"/guilds", map[string]any{"name": "Other guild"})
	inOrg := newAgent(r.Map()["id"].(string), "In the organisation")

	if r := e.Admin("PATCH", "/api/agents/"+inGuild, map[string]any{"config": map[string]any{"coding": false}}); r.Status != 200 {
		t.Fatalf("coding off: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, inGuild); o.RemoveHome {
		t.Fatalf("coding off removes the home: %+v", o)
	}
	if r := e.Admin("POST", "/api/agents/"+inOrg+"/workspace/stop", nil); r.Status != 202 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, inOrg); o.RemoveHome {
		t.Fatalf("stop removes the home: %+v", o)
	}
	if r := e.Admin("POST", "/api/agents/"+inOrg+"/workspace/reset", nil); r.Status != 202 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, inOrg); !o.RemoveHome {
		t.Fatalf("reset keeps the home: %+v", o)
	}
	if r := e.Do(e.Operator(orgID), "POST", "/api/agents/00000000-0000-0000-0000-000000000001/workspace/reset", nil); r.Status != 404 {
		t.Fatalf("reset of an unknown agent: %d %s", r.Status, r.Body)
	}

	for _, step := range []struct{ path, agent string }{
		{"/api/agents/" + agentID, agentID},
		{"/api/guilds/" + guildID, inGuild},
		{"/api/orgs/" + orgID, inOrg},
	} {
		if r := e.Admin("DELETE", step.path, nil); r.Status != 204 {
			t.Fatalf("delete %s: %d %s", step.path, r.Status, r.Body)
		}
		if o := nextOrderFor(t, ch, step.agent); !o.RemoveHome {
			t.Fatalf("delete %s keeps the home: %+v", step.path, o)
		}
	}
}

// Cancelling a run stops its agent's sandbox (the background commands the
// run left end with it); the home is kept.
func TestRunCancelStopsTheAgentsSandbox(t *testing.T) {
	t.Parallel()
	ch := orders(t)
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.Temporal = testtemporal.Client(t) }})
	orgID, guildID, agentID := e.Hierarchy()
	// A run row without a workflow: the cancel ends the row itself.
	r, err := runs.Create(context.Background(), e.DB, runs.NewRun{AgentID: agentID, GuildID: guildID, OrganisationID: orgID,
		Trigger: "direct", Budget: 10, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if resp := e.Admin("POST", "/api/runs/"+r.ID+"/cancel", nil); resp.Status != 202 {
		t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
	}
	if o := nextOrderFor(t, ch, agentID); o.RemoveHome || o.DropShellLogs {
		t.Fatalf("run cancel: %+v", o)
	}
}
