package group_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/workflows/run"
)

func authors(msgs []groupchat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Author.Name
	}
	return out
}

func byAuthor(msgs []groupchat.Message, name string) []groupchat.Message {
	var out []groupchat.Message
	for _, m := range msgs {
		if m.Author.Name == name {
			out = append(out, m)
		}
	}
	return out
}

// An operator's message that mentions two agents starts a group run for
// each; both final answers are posted as their messages, in seq order after
// it, with their run ids. One of them addresses a third agent with
// group_post (its secret redacted before it is stored), which answers too.
// The runs are trigger group, open with the chat history, offer the
// schedule tools and group_post but not secret_request, and show in
// Temporal with the message that started them.
func TestOperatorMessageToTwoAgentsAndAThird(t *testing.T) {
	script := func(r agentRequest) reply {
		if r.Agent == "alice" && r.N == 0 {
			return reply{Tool: "group_post", ToolArgs: `{"message":"@carol please check the deploy log (token ` + groupSecret + `)"}`}
		}
		return text(r)
	}
	e := newEnv(t, envOptions{}, script, "alice", "bob", "carol")
	op := e.post("@alice and @bob: is the release ready?")
	if op.Seq != 1 || len(op.Mentions) != 2 || op.Mentions[0].AgentID != e.agents["alice"] || op.Mentions[1].AgentID != e.agents["bob"] {
		t.Fatalf("posted %+v", op)
	}
	msgs := e.settle()
	e.recordRoute(op.ID, "two_recipients.json")
	if len(msgs) != 5 {
		t.Fatalf("chat: %v", authors(msgs))
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
	}
	if r := msgs[0].Route; r == nil || r.Method != groupchat.MethodRule || len(r.Recipients) != 2 {
		t.Fatalf("route of the operator message: %+v", msgs[0].Route)
	}
	for _, name := range []string{"alice", "bob"} {
		answers := byAuthor(msgs, name)
		var final *groupchat.Message
		for i := range answers {
			if answers[i].Content == name+" here" {
				final = &answers[i]
			}
		}
		if final == nil || final.RunID == "" || final.ParentID != op.ID || final.Hop != 1 || final.Author.AgentID != e.agents[name] {
			t.Fatalf("%s's answer: %+v", name, answers)
		}
		r, err := runs.Load(context.Background(), e.db, final.RunID)
		if err != nil || r.Trigger != runs.TriggerGroup || r.Status != runs.StatusCompleted {
			t.Fatalf("%s's run: %+v %v", name, r, err)
		}
	}
	posted := byAuthor(msgs, "alice")[0]
	if !strings.HasPrefix(posted.Content, "@carol please check") || strings.Contains(posted.Content, groupSecret) ||
		!strings.Contains(posted.Content, "[REDACTED") || posted.Hop != 1 || posted.ParentID != op.ID {
		t.Fatalf("alice's group_post: %+v", posted)
	}
	carol := byAuthor(msgs, "carol")
	if len(carol) != 1 || carol[0].Content != "carol here" || carol[0].ParentID != posted.ID || carol[0].Hop != 2 {
		t.Fatalf("carol: %+v", carol)
	}

	// What the runs saw and were offered.
	for _, req := range e.model.Requests() {
		if req.N != 0 {
			continue
		}
		if !strings.Contains(req.Opening, "[#1] Dana (user") || !strings.Contains(req.Opening, "is the release ready?") {
			t.Errorf("%s's opening lacks the history:\n%s", req.Agent, req.Opening)
		}
		offered := strings.Join(req.Tools, " ")
		if !strings.Contains(offered, "schedule_create_cron") || !strings.Contains(offered, "group_post") ||
			strings.Contains(offered, "secret_request") {
			t.Errorf("%s was offered %s", req.Agent, offered)
		}
	}
	if carolReq := e.model.Requests(); !containsOpening(carolReq, "carol", "please check the deploy log") {
		t.Error("carol's run does not open with alice's message")
	}
	if n := e.count(`SELECT count(*) FROM group_messages WHERE content LIKE '%' || $1 || '%'`, groupSecret); n != 0 {
		t.Errorf("%d chat messages hold the secret", n)
	}

	// The Temporal UI: the run's summary, memo and trigger name the message.
	desc, err := e.c.DescribeWorkflow(context.Background(), run.WorkflowID(carol[0].RunID), "")
	if err != nil {
		t.Fatal(err)
	}
	info := desc.RawResponse.WorkflowExecutionInfo
	var msgID, trigger string
	dc := converter.GetDefaultDataConverter()
	_ = dc.FromPayload(info.Memo.Fields["group_message_id"], &msgID)
	_ = dc.FromPayload(info.Memo.Fields["trigger"], &trigger)
	if msgID != posted.ID || trigger != runs.TriggerGroup {
		t.Errorf("memo: message %q trigger %q", msgID, trigger)
	}
	if summary, _ := desc.GetStaticSummary(); summary != fmt.Sprintf("run of carol (group, chat message #%d)", posted.Seq) {
		t.Errorf("summary %q", summary)
	}
	sa := info.SearchAttributes.GetIndexedFields()["GuildsTrigger"]
	var saTrigger string
	_ = dc.FromPayload(sa, &saTrigger)
	if saTrigger != runs.TriggerGroup {
		t.Errorf("GuildsTrigger = %q", saTrigger)
	}
}

func containsOpening(reqs []agentRequest, agent, text string) bool {
	for _, r := range reqs {
		if r.Agent == agent && strings.Contains(r.Opening, text) {
			return true
		}
	}
	return false
}

// Two agents that keep addressing each other stop at the hop bound: the
// message that reaches it is posted and routed to nobody.
func TestHopBoundStopsPingPong(t *testing.T) {
	script := func(r agentRequest) reply {
		if r.Agent == "alice" {
			return reply{Text: "@bob ping"}
		}
		return reply{Text: "@alice pong"}
	}
	e := newEnv(t, envOptions{maxHops: 3}, script, "alice", "bob")
	e.post("@alice start the rally")
	msgs := e.settle()
	got := strings.Join(authors(msgs), ",")
	if got != "Dana,alice,bob,alice" {
		t.Fatalf("chat: %s", got)
	}
	last := msgs[len(msgs)-1]
	e.recordRoute(last.ID, "hop_limit.json")
	if last.Hop != 3 || last.Route == nil || last.Route.Method != groupchat.MethodHopLimit || len(last.Route.Recipients) != 0 {
		t.Fatalf("last message: hop %d route %+v", last.Hop, last.Route)
	}
	if n := e.count(`SELECT count(*) FROM runs WHERE trigger = 'group'`); n != 3 {
		t.Errorf("%d group runs, want 3", n)
	}
}

// With group-routing on, the model chooses the recipients and the history
// each sees, from the agents and the recent chat.
func TestRouterChoosesRecipientsAndHistory(t *testing.T) {
	rm := newRouter(t, func(n int, body map[string]any) (int, string) {
		raw, _ := json.Marshal(body)
		if strings.Contains(string(raw), "on-call rota") {
			return 200, `{"recipients":["bob"],"history":1}`
		}
		return 200, `{"recipients":[],"history":1}`
	})
	e := newEnv(t, envOptions{router: rm.router(5 * time.Second)}, text, "alice", "bob")
	e.post("first, some context nobody needs")
	e.settle()
	e.post("who knows the on-call rota?")
	msgs := e.settle()
	if got := strings.Join(authors(msgs), ","); got != "Dana,Dana,bob" {
		t.Fatalf("chat: %s", got)
	}
	if r := msgs[1].Route; r == nil || r.Method != groupchat.MethodRouter || r.History != 1 || len(r.Recipients) != 1 || r.Recipients[0].Name != "bob" {
		t.Fatalf("route: %+v", msgs[1].Route)
	}
	for _, req := range e.model.Requests() {
		if strings.Contains(req.Opening, "nobody needs") {
			t.Errorf("bob saw more history than the router chose:\n%s", req.Opening)
		}
	}
	// The request is structured output naming the agents.
	var body map[string]any
	for len(rm.bodies) > 0 {
		body = <-rm.bodies
	}
	raw, _ := json.Marshal(body)
	if !strings.Contains(string(raw), `"json_schema"`) || !strings.Contains(string(raw), `"route-test"`) ||
		!strings.Contains(string(raw), `"enum":["alice","bob"]`) {
		t.Errorf("router request: %s", raw)
	}
}

// When the routing model fails or does not answer in time, the plain rule
// routes the message and the route says why.
func TestRouterFallback(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		why    string
	}{
		{"fails", 503, "answered 503"},
		{"times out", 0, "did not answer within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := newRouter(t, func(int, map[string]any) (int, string) { return tc.status, "" })
			e := newEnv(t, envOptions{router: rm.router(300 * time.Millisecond)}, text, "alice", "bob")
			e.post("@alice what's the status?")
			msgs := e.settle()
			if got := strings.Join(authors(msgs), ","); got != "Dana,alice" {
				t.Fatalf("chat: %s", got)
			}
			if tc.status != 0 {
				e.recordRoute(msgs[0].ID, "fallback.json")
			}
			r := msgs[0].Route
			if r == nil || r.Method != groupchat.MethodFallback || !strings.Contains(r.Note, tc.why) || strings.Contains(r.Note, "ts-router-key") {
				t.Fatalf("route: %+v", r)
			}
		})
	}
}

// One message to three agents starts their three runs at once: each
// agent's first model turn waits until all three have arrived.
func TestThreeRecipientsRunConcurrently(t *testing.T) {
	e := newEnv(t, envOptions{}, text, "alice", "bob", "carol")
	e.model.arrived = make(chan agentRequest, 10)
	e.model.release = make(chan struct{})
	e.post("@alice @bob @carol stand-up time")
	seen := map[string]bool{}
	timeout := time.After(time.Minute)
	for len(seen) < 3 {
		select {
		case r := <-e.model.arrived:
			seen[r.Agent] = true
		case <-timeout:
			t.Fatalf("only %v reached their model while the others waited", seen)
		}
	}
	close(e.model.release)
	msgs := e.settle()
	if len(msgs) != 4 {
		t.Fatalf("chat: %v", authors(msgs))
	}
}

// A recipient whose model no key serves gets no run: its delivery says why
// and the others still answer.
func TestRecipientWithoutModelKeyIsSkipped(t *testing.T) {
	e := newEnv(t, envOptions{}, text, "alice", "bob")
	if _, err := e.db.Exec(context.Background(), `UPDATE agents SET model = 'deepinfra/some-model' WHERE id = $1`, e.agents["bob"]); err != nil {
		t.Fatal(err)
	}
	op := e.post("@alice @bob roll call")
	msgs := e.settle()
	if got := strings.Join(authors(msgs), ","); got != "Dana,alice" {
		t.Fatalf("chat: %s", got)
	}
	res := e.waitRoute(op.ID)
	var skipped string
	for _, a := range res.Answers {
		if a.AgentID == e.agents["bob"] {
			skipped = a.Skipped
		}
	}
	if !strings.Contains(skipped, "deepinfra has no key") {
		t.Fatalf("bob's answer: %+v", res.Answers)
	}
	if n := e.count(`SELECT count(*) FROM group_deliveries WHERE agent_id = $1 AND run_id IS NULL AND skipped <> ''`, e.agents["bob"]); n != 1 {
		t.Errorf("bob's delivery rows: %d", n)
	}
}

// An agent in a direct run can post into its guild's chat too: the message
// starts an exchange of its own (hop 1, no parent) and its mention routes.
func TestGroupPostFromADirectRun(t *testing.T) {
	script := func(r agentRequest) reply {
		if r.Agent == "" && r.N == 0 { // the direct run opens with the operator's text
			return reply{Tool: "group_post", ToolArgs: `{"message":"@bob the nightly build is red"}`}
		}
		return text(r)
	}
	e := newEnv(t, envOptions{}, script, "alice", "bob")
	id, err := run.Start(context.Background(), e.c, e.db, run.Input{AgentID: e.agents["alice"], Message: "check the nightly build",
		Models: e.resolver(), TaskQueue: e.queue})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "alice's post", func() bool { return len(e.chat()) > 0 })
	msgs := e.settle()
	if got := strings.Join(authors(msgs), ","); got != "alice,bob" {
		t.Fatalf("chat: %s", got)
	}
	if msgs[0].RunID != id || msgs[0].Hop != 1 || msgs[0].ParentID != "" || msgs[1].ParentID != msgs[0].ID || msgs[1].Hop != 2 {
		t.Fatalf("messages: %+v", msgs)
	}
}
