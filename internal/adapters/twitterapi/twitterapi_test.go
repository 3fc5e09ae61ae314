package twitterapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/twitterapi"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(base, key string) adapters.Conn {
	return adapters.Conn{BaseURL: base, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool and fails the test if the key shows up anywhere.
func call(t *testing.T, svc *fakeService, key, tool, args string) (string, error) {
	t.Helper()
	out, err := twitterapi.Adapter{}.Call(context.Background(), conn(svc.URL, key), tool, json.RawMessage(args))
	if strings.Contains(out, key) || (err != nil && strings.Contains(err.Error(), key)) {
		t.Fatalf("%s: the key leaked: %q %v", tool, out, err)
	}
	return out, err
}

func mustCall(t *testing.T, svc *fakeService, tool, args string) []string {
	t.Helper()
	out, err := call(t, svc, goodKey, tool, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	if strings.Contains(out, "pbs.twimg.com") || strings.Contains(out, "<a href") {
		t.Fatalf("%s: images or HTML in the answer:\n%s", tool, out)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

const tweetHeader = "id\tcreated\tauthor\tlikes\treposts\treplies\tquotes\tviews\ttext"

func TestRegistered(t *testing.T) {
	if a, err := adapters.Get("twitterapi"); err != nil || a.Name() != "twitterapi" {
		t.Fatalf("registry: %v %v", a, err)
	}
}

func TestCheck(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	hint, err := twitterapi.Adapter{}.Check(ctx, conn(svc.URL, goodKey))
	if err != nil || hint != "" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	if got := svc.last().Path; got != "/oapi/my/info" {
		t.Fatalf("checked %s", got)
	}
	_, err = twitterapi.Adapter{}.Check(ctx, conn(svc.URL, "tapi-wrong-key"))
	if !errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("bad key: %v", err)
	}
	down := newService(t)
	down.Close()
	_, err = twitterapi.Adapter{}.Check(ctx, conn(down.URL, goodKey))
	if err == nil || errors.Is(err, adapters.ErrRejected) || strings.Contains(err.Error(), goodKey) {
		t.Fatalf("service down: %v", err)
	}
}

func TestSearch(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "search", `{"query":"golang"}`)
	if rows[0] != tweetHeader || len(rows) != 1+adapters.DefaultRows {
		t.Fatalf("default rows: %d\n%s", len(rows), strings.Join(rows, "\n"))
	}
	if want := "1846987139428634000\t2024-12-10 07:00\tsearch\t10\t3\t2\t1\t1000\tpost 0 by search"; rows[1] != want {
		t.Fatalf("row %q, want %q", rows[1], want)
	}
	q := svc.last().Query()
	if q.Get("queryType") != "Top" || !strings.HasPrefix(q.Get("query"), "golang since:") || !strings.HasSuffix(q.Get("query"), "_UTC") {
		t.Fatalf("search query: %v", q)
	}
	// 30 rows take a second page through the cursor; more than 30 is capped.
	before := svc.count()
	rows = mustCall(t, svc, "search", `{"query":"golang","limit":500}`)
	if len(rows) != 1+adapters.MaxRows || svc.count()-before != 2 || svc.last().Query().Get("cursor") != "p20" {
		t.Fatalf("capped rows: %d rows, %d requests, last %v", len(rows), svc.count()-before, svc.last())
	}
	// A query with its own window keeps it.
	mustCall(t, svc, "search", `{"query":"golang since:2024-01-01","limit":1}`)
	if got := svc.last().Query().Get("query"); got != "golang since:2024-01-01" {
		t.Fatalf("own window rewritten: %q", got)
	}
}

func TestServiceErrors(t *testing.T) {
	svc := newService(t)
	_, err := call(t, svc, goodKey, "search", `{"query":"ratelimited"}`)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || !strings.Contains(err.Error(), "Too many requests") {
		t.Fatalf("429: %v", err)
	}
	_, err = call(t, svc, "tapi-revoked", "posts", `{"user":"jack"}`)
	if !errors.As(err, &he) || !he.Refused() {
		t.Fatalf("revoked key: %v", err)
	}
	if _, err = call(t, svc, goodKey, "user", `{"user":"nobody_here"}`); err == nil || !strings.Contains(err.Error(), "User not found") {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err = call(t, svc, goodKey, "post", `{"post":"404"}`); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown post: %v", err)
	}
	if _, err = call(t, svc, goodKey, "delete_everything", `{}`); err == nil || !strings.Contains(err.Error(), "delete_everything") {
		t.Fatalf("unknown tool: %v", err)
	}
	for tool, args := range map[string]string{
		"post":      `{"post":"https://example.com/about"}`,
		"replies":   `{"post":"not an id"}`,
		"followers": `{"username":"bad name!"}`,
		"trends":    `{"woeid":-3}`,
		"search":    `{"query":"  "}`,
	} {
		if _, err := call(t, svc, goodKey, tool, args); err == nil {
			t.Errorf("%s %s: no error", tool, args)
		}
	}
}

func TestUser(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "user", `{"user":"@jack"}`)
	want := []string{
		"id\tusername\tname\tfollowers\tfollowing\tposts\tverified\tcreated\tlocation\tbio",
		"44196397\tjack\tName jack\t1200\t300\t4500\ttrue\t2007-03-21\tParis\tBio of jack",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(rows, "\n"))
	}
	if q := svc.last().Query(); q.Get("userName") != "jack" {
		t.Fatalf("query %v", q)
	}
	rows = mustCall(t, svc, "user", `{"user":"12"}`)
	if svc.last().Path != "/twitter/user/batch_info_by_ids" || svc.last().Query().Get("userIds") != "12" || !strings.HasPrefix(rows[1], "12\tby_id\t") {
		t.Fatalf("by id: %v %q", svc.last(), rows)
	}
}

func TestPosts(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "posts", `{"user":"jack","limit":25}`)
	if rows[0] != tweetHeader || len(rows) != 26 || !strings.HasSuffix(rows[25], "post 24 by jack") {
		t.Fatalf("%d rows, last %q", len(rows), rows[len(rows)-1])
	}
	rows = mustCall(t, svc, "posts", `{"user":"783214","limit":2}`)
	if len(rows) != 3 || svc.last().Query().Get("userId") != "783214" || !strings.HasSuffix(rows[1], "by byid783214") {
		t.Fatalf("by id: %v %q", svc.last(), rows)
	}
}

func TestPost(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "post", `{"post":"https://x.com/jack/status/20?s=46"}`)
	if len(rows) != 2 || rows[0] != tweetHeader || svc.last().Query().Get("tweet_ids") != "20" {
		t.Fatalf("%v %q", svc.last(), rows)
	}
	cells := strings.Split(rows[1], "\t")
	text := cells[len(cells)-1]
	if len(cells) != 9 || len([]rune(text)) != 281 || !strings.HasSuffix(text, "…") {
		t.Fatalf("text not clipped to 280: %d cells, %d runes", len(cells), len([]rune(text)))
	}
	mustCall(t, svc, "post", `{"post":"https://twitter.com/i/web/status/1846987139428634858"}`)
	if got := svc.last().Query().Get("tweet_ids"); got != "1846987139428634858" {
		t.Fatalf("id from URL: %q", got)
	}
}

func TestFollows(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "followers", `{"username":"jack"}`)
	if rows[0] != "id\tusername\tname\tfollowers\tfollowing\tposts\tverified" || len(rows) != 16 || rows[1] != "1000\tfan0\tName fan0\t1200\t300\t4500\ttrue" {
		t.Fatalf("followers:\n%s", strings.Join(rows, "\n"))
	}
	if q := svc.last().Query(); q.Get("userName") != "jack" || q.Get("pageSize") != "20" {
		t.Fatalf("followers query %v", q)
	}
	rows = mustCall(t, svc, "following", `{"username":"jack","limit":30}`)
	if len(rows) != 31 || rows[1] != "2000\tidol0\tIdol\t5000\t10\t77\ttrue" || svc.last().Path != "/twitter/user/followings" {
		t.Fatalf("following:\n%s", strings.Join(rows[:2], "\n"))
	}
}

func TestMentionsRepliesQuotes(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "mentions", `{"username":"jack","limit":30}`)
	if len(rows) != 26 || !strings.HasSuffix(rows[25], "post 24 by to_jack") {
		t.Fatalf("mentions: %d rows", len(rows))
	}
	rows = mustCall(t, svc, "replies", `{"post":"https://x.com/jack/status/77","limit":21}`)
	if len(rows) != 22 || svc.last().Query().Get("tweetId") != "77" || !strings.HasSuffix(rows[21], "post 20 by re_77") {
		t.Fatalf("replies: %d rows, %v", len(rows), svc.last())
	}
	rows = mustCall(t, svc, "quotes", `{"post":"77"}`)
	if len(rows) != 9 || rows[0] != tweetHeader {
		t.Fatalf("quotes: %d rows", len(rows))
	}
}

func TestTrends(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "trends", `{}`)
	if rows[0] != "rank\tname\tquery\tmeta" || len(rows) != 16 || rows[1] != "1\t#topic0\t%23topic0\t30K posts" {
		t.Fatalf("worldwide:\n%s", strings.Join(rows, "\n"))
	}
	if svc.last().Query().Get("woeid") != "1" {
		t.Fatalf("default woeid: %v", svc.last())
	}
	rows = mustCall(t, svc, "trends", `{"woeid":615702,"limit":40}`)
	if len(rows) != 31 || rows[30] != "30\t#topic29\t%23topic29\t1K posts" || svc.last().Query().Get("woeid") != "615702" {
		t.Fatalf("place:\n%s", strings.Join(rows, "\n"))
	}
}
