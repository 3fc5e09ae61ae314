package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/testtemporal"
	groupwf "github.com/guilds/guilds/workflows/group"
)

type chatPosted struct {
	Message         groupchat.Message `json:"message"`
	Routing         string            `json:"routing"`
	Addressed       []string          `json:"addressed"`
	UnknownMentions []string          `json:"unknown_mentions"`
	Notice          string            `json:"notice"`
}

func chatEnv(t *testing.T, vars map[string]string) (*apitest.Env, string, string, map[string]string) {
	tc := testtemporal.Client(t)
	queue := testtemporal.TaskQueue(t) // nobody polls it: routing starts, and waits
	e := apitest.New(t, apitest.Options{Env: vars, Tweak: func(d *api.Deps) { d.Temporal = tc; d.RunTaskQueue = queue }})
	org, guild, _ := e.Hierarchy()
	agents := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		r := e.Admin("POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": name})
		if r.Status != 201 {
			t.Fatalf("agent: %d %s", r.Status, r.Body)
		}
		agents[name] = r.Map()["id"].(string)
	}
	return e, org, guild, agents
}

func problemOf(r apitest.Response) string {
	var body struct {
		Error struct {
			Problems []struct{ Field string } `json:"problems"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if len(body.Error.Problems) == 0 {
		return ""
	}
	return body.Error.Problems[0].Field
}

// Operators post into their guild's chat and page through it; bad input is
// refused naming the field and stores nothing; another organisation's
// guild is 404; an unknown @mention is posted, addressed to nobody, and the
// answer says so; each message's routing starts under its own workflow id.
func TestChatPostAndRead(t *testing.T) {
	t.Parallel()
	e, org, guild, agents := chatEnv(t, nil)
	op := e.Operator(org)
	path := "/api/guilds/" + guild + "/chat/messages"

	for name, body := range map[string]any{
		"empty":    map[string]any{"message": "  \n "},
		"missing":  map[string]any{},
		"oversize": map[string]any{"message": strings.Repeat("é", groupchat.MaxContent+1)},
	} {
		if r := e.Do(op, "POST", path, body); r.Status != 422 || problemOf(r) != "message" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if n := e.Count("group_messages"); n != 0 {
		t.Fatalf("refused posts stored %d messages", n)
	}

	// Another organisation's guild, and a stranger to this one.
	otherOrg := e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).Map()["id"].(string)
	otherGuild := e.Admin("POST", "/api/orgs/"+otherOrg+"/guilds", map[string]any{"name": "Theirs"}).Map()["id"].(string)
	if r := e.Do(op, "POST", "/api/guilds/"+otherGuild+"/chat/messages", map[string]any{"message": "hello"}); r.Status != 404 ||
		!strings.Contains(string(r.Body), "no guild with this id") {
		t.Errorf("other organisation's guild: %d %s", r.Status, r.Body)
	}
	if r := e.Do(e.Operator(""), "GET", path, nil); r.Status != 404 {
		t.Errorf("stranger read: %d", r.Status)
	}

	var posted chatPosted
	r := e.Do(op, "POST", path, map[string]any{"message": "@zed can you look? cc alice@example.com"})
	r.JSON(&posted)
	if r.Status != 201 || posted.Message.Seq != 1 || posted.Routing != "rule" || len(posted.Addressed) != 0 ||
		fmt.Sprint(posted.UnknownMentions) != "[zed]" || !strings.Contains(posted.Notice, "@zed names no agent of this guild") ||
		!strings.Contains(posted.Notice, "no agent is addressed") || posted.Message.Author.Kind != "user" || posted.Message.Author.Name != "operator" {
		t.Fatalf("unknown mention: %d %s", r.Status, r.Body)
	}
	desc, err := testtemporal.Client(t).DescribeWorkflow(context.Background(), groupwf.WorkflowID(posted.Message.ID), "")
	if err != nil {
		t.Fatalf("the message's routing: %v", err)
	}
	var memoID string
	_ = converter.GetDefaultDataConverter().FromPayload(desc.RawResponse.WorkflowExecutionInfo.Memo.Fields["message_id"], &memoID)
	if memoID != posted.Message.ID {
		t.Errorf("routing memo names %q", memoID)
	}

	r = e.Do(op, "POST", path, map[string]any{"message": "@Alice and @bob, status?"})
	posted = chatPosted{}
	r.JSON(&posted)
	if r.Status != 201 || fmt.Sprint(posted.Addressed) != "[alice bob]" || len(posted.UnknownMentions) != 0 || posted.Notice != "" {
		t.Fatalf("mentions: %d %s", r.Status, r.Body)
	}

	// Responders answer what mentions nobody.
	if r := e.Do(op, "PUT", "/api/guilds/"+guild+"/chat/responders", map[string]any{"agent_ids": []string{agents["bob"], otherGuild}}); r.Status != 422 ||
		problemOf(r) != "agent_ids" {
		t.Errorf("unknown responder: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "PUT", "/api/guilds/"+guild+"/chat/responders", map[string]any{"agent_ids": []string{agents["bob"]}}); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"name":"bob","responder":true`) {
		t.Fatalf("responders: %d %s", r.Status, r.Body)
	}
	r = e.Do(op, "POST", path, map[string]any{"message": "anyone around?"})
	posted = chatPosted{}
	r.JSON(&posted)
	if fmt.Sprint(posted.Addressed) != "[bob]" {
		t.Fatalf("responder: %s", r.Body)
	}

	// Pages: the newest, older ones, newer ones; bad parameters name themselves.
	var page struct {
		Messages []groupchat.Message `json:"messages"`
		HasMore  bool                `json:"has_more"`
	}
	seqs := func() string {
		var out []string
		for _, m := range page.Messages {
			out = append(out, fmt.Sprint(m.Seq))
		}
		return strings.Join(out, ",")
	}
	e.Do(op, "GET", path+"?limit=2", nil).JSON(&page)
	if seqs() != "2,3" || !page.HasMore {
		t.Errorf("newest page: %s more=%v", seqs(), page.HasMore)
	}
	e.Do(op, "GET", path+"?before=2", nil).JSON(&page)
	if seqs() != "1" || page.HasMore {
		t.Errorf("older page: %s more=%v", seqs(), page.HasMore)
	}
	e.Do(op, "GET", path+"?after=1&limit=1", nil).JSON(&page)
	if seqs() != "2" || !page.HasMore {
		t.Errorf("newer page: %s more=%v", seqs(), page.HasMore)
	}
	for q, field := range map[string]string{"?limit=0": "limit", "?limit=201": "limit", "?after=x": "after",
		"?before=-1": "before", "?after=1&before=3": "before"} {
		if r := e.Do(op, "GET", path+q, nil); r.Status != 422 || problemOf(r) != field {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

// With group-routing on, the answer leaves the choice to the routing model.
func TestChatPostWithRouter(t *testing.T) {
	t.Parallel()
	e, org, guild, _ := chatEnv(t, map[string]string{"TYPESAFE_API_KEY": "ts-key-0123456789"})
	var posted chatPosted
	r := e.Do(e.Operator(org), "POST", "/api/guilds/"+guild+"/chat/messages", map[string]any{"message": "@alice hi"})
	r.JSON(&posted)
	if r.Status != 201 || posted.Routing != "router" || posted.Addressed != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// The event stream sends the chat from ?after, then each message as it is
// posted; a reconnect with Last-Event-ID resumes after it.
func TestChatEvents(t *testing.T) {
	t.Parallel()
	e, org, guild, _ := chatEnv(t, nil)
	op := e.Operator(org)
	path := "/api/guilds/" + guild + "/chat/messages"
	e.Do(op, "POST", path, map[string]any{"message": "first"})

	follow := func(header string) (*bufio.Scanner, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.HTTP.URL+"/api/guilds/"+guild+"/chat/events", nil)
		req.Header.Set("Authorization", "Bearer "+op)
		if header != "" {
			req.Header.Set("Last-Event-ID", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %v %v", err, resp)
		}
		return bufio.NewScanner(resp.Body), func() { cancel(); resp.Body.Close() }
	}
	next := func(sc *bufio.Scanner) (string, groupchat.Message) {
		t.Helper()
		var id string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var m groupchat.Message
				if err := json.Unmarshal([]byte(v), &m); err != nil {
					t.Fatal(err)
				}
				return id, m
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return "", groupchat.Message{}
	}
	sc, stop := follow("")
	if id, m := next(sc); id != "1" || m.Content != "first" {
		t.Fatalf("first event: %s %+v", id, m)
	}
	e.Do(op, "POST", path, map[string]any{"message": "second"})
	if id, m := next(sc); id != "2" || m.Content != "second" {
		t.Fatalf("second event: %s %+v", id, m)
	}
	stop()
	e.Do(op, "POST", path, map[string]any{"message": "third"})
	sc, stop = follow("2")
	defer stop()
	if id, m := next(sc); id != "3" || m.Content != "third" {
		t.Fatalf("resumed: %s %+v", id, m)
	}
	if r := e.Do(op, "GET", "/api/guilds/"+guild+"/chat/events?after=x", nil); r.Status != 422 || problemOf(r) != "after" {
		t.Errorf("bad after: %d %s", r.Status, r.Body)
	}
}
