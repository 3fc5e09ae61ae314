package group_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/groupchat"
)

// Two agents cannot re-arm each other through schedules: a run answering
// an operator's message creates one (its origin recorded), a run answering
// another agent's message is refused, since its wake-ups would post at the
// start of a fresh exchange, past the hop bound.
func TestAgentAnsweringAnAgentCannotCreateASchedule(t *testing.T) {
	cron := `{"cron":"0 9 * * 1","description":"weekly ping","instruction":"@bob ping"}`
	script := func(r agentRequest) reply {
		switch {
		case r.N == 0 && r.Agent == "alice":
			return reply{Tool: "schedule_create_cron", ToolArgs: cron}
		case r.N == 0:
			return reply{Tool: "schedule_create_cron", ToolArgs: strings.Replace(cron, "@bob", "@alice", 1)}
		case r.Agent == "alice":
			return reply{Text: "@bob please keep pinging me every week"}
		}
		return reply{Text: "noted"}
	}
	e := newEnv(t, envOptions{schedules: true}, script, "alice", "bob")
	t.Cleanup(func() {
		// The Temporal schedules the test made go with it.
		_, _ = e.db.Exec(context.Background(), `DELETE FROM schedules`)
	})
	op := e.post("@alice set up the weekly ping")
	e.settle()

	var origin string
	var hop int
	if err := e.db.QueryRow(context.Background(), `SELECT coalesce(origin_message_id::text, ''), origin_hop FROM schedules WHERE agent_id = $1`,
		e.agents["alice"]).Scan(&origin, &hop); err != nil {
		t.Fatalf("alice's schedule: %v", err)
	}
	if origin != op.ID || hop != 0 {
		t.Errorf("alice's schedule comes from %q at hop %d, want the operator's message %s", origin, hop, op.ID)
	}
	if n := e.count(`SELECT count(*) FROM schedules WHERE agent_id = $1`, e.agents["bob"]); n != 0 {
		t.Fatalf("bob, answering alice, created %d schedules", n)
	}
	if n := e.count(`SELECT count(*) FROM tool_calls c JOIN runs r ON r.id = c.run_id
		WHERE r.agent_id = $1 AND c.tool_name = 'schedule_create_cron' AND c.result LIKE '%answers another agent%'`, e.agents["bob"]); n != 1 {
		t.Fatalf("bob's refused call: %d results say why", n)
	}
}

// Inside one exchange fan-out is bounded: every agent answers by asking all
// the others, which the hop bound alone lets grow to dozens of runs; the
// exchange starts at most RunsPerExchange of them, and the route that
// stops it says so.
func TestAnExchangeStartsAtMostItsRunBudget(t *testing.T) {
	script := func(r agentRequest) reply {
		return reply{Text: "@alice @bob @carol what do you all think?"}
	}
	e := newEnv(t, envOptions{limits: groupchat.Limits{RunsPerExchange: 4}}, script, "alice", "bob", "carol")
	e.post("@alice @bob @carol go")
	msgs := e.settle()
	if n := e.count(`SELECT count(*) FROM runs WHERE trigger = 'group'`); n != 4 {
		t.Fatalf("%d group runs, want the budget of 4", n)
	}
	var stopped int
	for _, m := range msgs {
		if m.Route != nil && m.Route.Method == groupchat.MethodRunBudget && strings.Contains(m.Route.Note, "GUILDS_GROUP_RUNS_PER_EXCHANGE") {
			stopped++
		}
	}
	if stopped == 0 {
		t.Fatalf("no route says the budget stopped the exchange: %+v", msgs)
	}
}

// One run posts at most PostsPerRun messages with group_post; a call past
// it is refused and says what to do, and the run goes on to its answer.
// Past the guild's agent message rate, group_post is refused too.
func TestGroupPostIsCappedPerRunAndByTheGuildsRate(t *testing.T) {
	script := func(r agentRequest) reply {
		if r.N < 3 {
			return reply{Tool: "group_post", ToolArgs: `{"message":"status update"}`}
		}
		return reply{Text: "done"}
	}
	e := newEnv(t, envOptions{limits: groupchat.Limits{PostsPerRun: 2, AgentMessagesPerMinute: 10, Window: time.Hour}}, script, "alice", "bob")
	e.post("@alice report")
	msgs := e.settle()
	if got := len(byAuthor(msgs, "alice")); got != 3 {
		t.Fatalf("alice posted %d messages, want 2 group_posts and her answer: %v", got, authors(msgs))
	}
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE tool_name = 'group_post' AND result LIKE '%GUILDS_GROUP_POSTS_PER_RUN%'`); n != 1 {
		t.Fatalf("%d refused group_post calls, want 1", n)
	}

	// The rate: two more agent messages within the window are all it allows.
	e2 := newEnv(t, envOptions{limits: groupchat.Limits{PostsPerRun: 5, AgentMessagesPerMinute: 2, Window: time.Hour}}, script, "alice")
	e2.post("@alice report")
	e2.settle()
	if n := e2.count(`SELECT count(*) FROM tool_calls WHERE tool_name = 'group_post' AND result LIKE '%GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE%'`); n != 1 {
		t.Fatalf("%d group_post calls refused by the rate, want 1", n)
	}
}
