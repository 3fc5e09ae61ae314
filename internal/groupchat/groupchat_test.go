package groupchat

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

func TestParseMentions(t *testing.T) {
	for text, want := range map[string]string{
		"@alice and @Bob.":                   "alice,Bob",
		"mail alice@example.com, ask @carol": "carol",
		"@alice @ALICE (@dave-2) @é-bot":     "alice,dave-2,é-bot",
		"no mention @ all; @@x":              "",
	} {
		if got := strings.Join(parseMentions(text), ","); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
	agents := []Agent{{ID: "a1", Name: "Research Bot"}, {ID: "a2", Name: "bob"}}
	got := resolveMentions("@research-bot @research_bot @Bob @zed", agents)
	if fmt.Sprint(got) != "[{research-bot a1} {Bob a2} {zed }]" {
		t.Errorf("resolved %v", got)
	}
}

func TestRule(t *testing.T) {
	agents := []Agent{{ID: "a", Name: "alice"}, {ID: "b", Name: "bob", Responder: true}, {ID: "c", Name: "carol", Responder: true}}
	op := Message{Author: Author{Kind: AuthorUser}}
	names := func(rs []Recipient) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"mentions win over responders", withMentions(op, "a"), "alice"},
		{"no mention: responders", op, "bob,carol"},
		{"unknown mention: responders", withMentions(op, ""), "bob,carol"},
		{"agent without mention: nobody", Message{Author: Author{Kind: AuthorAgent, AgentID: "a"}}, ""},
		{"never the author", withMentions(Message{Author: Author{Kind: AuthorAgent, AgentID: "b"}}, "b", "c"), "carol"},
	}
	for _, tc := range cases {
		if got := names(Rule(tc.m, agents)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func withMentions(m Message, ids ...string) Message {
	for _, id := range ids {
		m.Mentions = append(m.Mentions, Mention{Name: "x" + id, AgentID: id})
	}
	return m
}

// The router's answer is structured output; anything else is an error the
// caller falls back on, and the key never shows in it.
func TestRouterRefusesWhatIsNotTheSchema(t *testing.T) {
	const key = "ts-secret-key-0123456789"
	for content, want := range map[string]string{
		`{"recipients":["bob"],"history":3}`:           "",
		`{"recipients":["bob"],"history":3,"extra":1}`: "is not {recipients, history}",
		`{"history":3}`:           "is not {recipients, history}",
		`sure! bob should answer`: "is not {recipients, history}",
		"echo " + key:             "[key]",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"choices":[{"message":{"content":%q}}]}`, content)
		}))
		r := &Router{BaseURL: srv.URL, Key: key, Timeout: 5 * time.Second}
		ans, err := r.Decide(context.Background(), RouterInput{})
		srv.Close()
		switch {
		case want == "" && (err != nil || fmt.Sprint(ans.Recipients) != "[bob]" || ans.History != 3):
			t.Errorf("%s: %+v %v", content, ans, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), key)):
			t.Errorf("%s: %v", content, err)
		}
	}
}

// The model's names are matched to agents; unknown ones and the author are
// dropped and said so; history stays within bounds.
func TestRouted(t *testing.T) {
	agents := []Agent{{ID: "a", Name: "alice"}, {ID: "b", Name: "Bob"}}
	m := Message{Author: Author{Kind: AuthorAgent, AgentID: "a"}}
	r := routed(m, agents, RouterAnswer{Recipients: []string{"alice", "@bob", "bob", "zed"}, History: 500}, "")
	if len(r.Recipients) != 1 || r.Recipients[0].AgentID != "b" || r.History != MaxHistory || !strings.Contains(r.Note, "zed") {
		t.Errorf("%+v", r)
	}
}

func fixture(t *testing.T) (*pgxpool.Pool, string, map[string]string) {
	db := testdb.New(t)
	ctx := context.Background()
	var org, guild string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	agents := map[string]string{}
	for _, n := range []string{"alice", "bob"} {
		var id string
		if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1, $2) RETURNING id`, guild, n).Scan(&id); err != nil {
			t.Fatal(err)
		}
		agents[n] = id
	}
	return db, guild, agents
}

func post(t *testing.T, db *pgxpool.Pool, in NewMessage) (Message, bool) {
	t.Helper()
	var m Message
	var created bool
	err := store.InTx(context.Background(), db, func(tx pgx.Tx) error {
		var err error
		m, created, err = Post(context.Background(), tx, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, created
}

// Concurrent posts get distinct seqs with no gap, in commit order; a post
// key returns the first post; a route is recorded once.
func TestPostOrderKeysAndRoutes(t *testing.T) {
	t.Parallel()
	db, guild, agents := fixture(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(t, db, NewMessage{GuildID: guild, Author: Author{Kind: AuthorUser}, Content: fmt.Sprintf("message %d", i)})
		}()
	}
	wg.Wait()
	msgs, more, err := List(context.Background(), db, guild, Page{Limit: MaxLimit})
	if err != nil || more || len(msgs) != 20 {
		t.Fatalf("%d messages, more %v, %v", len(msgs), more, err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
	}

	in := NewMessage{GuildID: guild, Author: Author{Kind: AuthorAgent, AgentID: agents["alice"]}, Content: "@bob over to you",
		Hop: 1, PostKey: "run:x:answer"}
	first, created := post(t, db, in)
	in.Content = "a retry says something else"
	again, createdAgain := post(t, db, in)
	if !created || createdAgain || again.ID != first.ID || again.Content != "@bob over to you" || first.Author.Name != "alice" ||
		first.Mentions[0].AgentID != agents["bob"] {
		t.Fatalf("post key: %+v %+v", first, again)
	}

	r1, err := RecordRoute(context.Background(), db, first.ID, Route{Method: MethodRule, Recipients: []Recipient{{AgentID: agents["bob"], Name: "bob"}}, History: 20})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := RecordRoute(context.Background(), db, first.ID, Route{Method: MethodFallback, History: 1})
	if err != nil || r2.Method != MethodRule || len(r2.Recipients) != 1 || r1.CreatedAt != r2.CreatedAt {
		t.Fatalf("second decision: %+v %v", r2, err)
	}

	// An agent of another guild cannot author here.
	err = store.InTx(context.Background(), db, func(tx pgx.Tx) error {
		_, _, err := Post(context.Background(), tx, NewMessage{GuildID: guild, Author: Author{Kind: AuthorAgent,
			AgentID: "00000000-0000-0000-0000-000000000000"}, Content: "hi"})
		return err
	})
	if err == nil {
		t.Error("a stranger agent posted")
	}
}
