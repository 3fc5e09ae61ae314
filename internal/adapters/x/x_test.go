package x_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/x"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(base, key string) adapters.Conn {
	return adapters.Conn{BaseURL: base, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool and fails the test if the key shows up anywhere.
func call(t *testing.T, svc *fakeService, key, tool, args string) (string, error) {
	t.Helper()
	out, err := x.Adapter{}.Call(context.Background(), conn(svc.api(), key), tool, json.RawMessage(args))
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
	if strings.Contains(out, "pbs.twimg.com") || strings.Contains(out, "edit_history") {
		t.Fatalf("%s: images or other bulk in the answer:\n%s", tool, out)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

const postHeader = "id\tcreated\tauthor\tlikes\treposts\treplies\tquotes\tviews\ttext"

func TestRegistered(t *testing.T) {
	if a, err := adapters.Get("x"); err != nil || a.Name() != "x" {
		t.Fatalf("registry: %v %v", a, err)
	}
}

func TestCheck(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	hint, err := x.Adapter{}.Check(ctx, conn(svc.api(), goodKey))
	if err != nil || hint != "" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	if got := svc.last().Path; got != "/2/users/by/username/X" {
		t.Fatalf("checked %s", got)
	}
	_, err = x.Adapter{}.Check(ctx, conn(svc.api(), "AAAAwrong%3Dtoken"))
	if !errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("bad key: %v", err)
	}
	down := newService(t)
	down.Close()
	_, err = x.Adapter{}.Check(ctx, conn(down.api(), goodKey))
	if err == nil || errors.Is(err, adapters.ErrRejected) || strings.Contains(err.Error(), goodKey) {
		t.Fatalf("service down: %v", err)
	}
}

func TestSearch(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "search", `{"query":"golang -is:retweet"}`)
	if rows[0] != postHeader || len(rows) != 1+adapters.DefaultRows {
		t.Fatalf("default rows: %d\n%s", len(rows), strings.Join(rows, "\n"))
	}
	if want := "1846987139428634000\t2024-12-10 07:00\tXDevelopers\t10\t3\t2\t1\t1000\tpost 0 by XDevelopers"; rows[1] != want {
		t.Fatalf("row %q, want %q", rows[1], want)
	}
	q := svc.last().Query()
	if svc.last().Path != "/2/tweets/search/recent" || q.Get("query") != "golang -is:retweet" || q.Get("max_results") != "15" ||
		q.Get("expansions") != "author_id" || q.Get("user.fields") != "username" || !strings.Contains(q.Get("tweet.fields"), "public_metrics") {
		t.Fatalf("search request: %v", svc.last())
	}
	// One request however many rows; more than 30 is capped, fewer than the
	// service's least page size is asked as 10 and cut.
	before := svc.count()
	rows = mustCall(t, svc, "search", `{"query":"golang","limit":500}`)
	if len(rows) != 1+adapters.MaxRows || svc.count()-before != 1 || svc.last().Query().Get("max_results") != "30" {
		t.Fatalf("capped rows: %d rows, %d requests, last %v", len(rows), svc.count()-before, svc.last())
	}
	rows = mustCall(t, svc, "search", `{"query":"golang","limit":3}`)
	if len(rows) != 4 || svc.last().Query().Get("max_results") != "10" {
		t.Fatalf("small limit: %d rows, %v", len(rows), svc.last())
	}
	rows = mustCall(t, svc, "search", `{"query":"nothing at all"}`)
	if len(rows) != 1 || rows[0] != postHeader {
		t.Fatalf("no match: %q", rows)
	}
}

func TestServiceErrors(t *testing.T) {
	svc := newService(t)
	_, err := call(t, svc, goodKey, "search", `{"query":"ratelimited"}`)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("429: %v", err)
	}
	_, err = call(t, svc, "AAAArevoked", "posts", `{"user":"jack"}`)
	if !errors.As(err, &he) || !he.Refused() {
		t.Fatalf("revoked key: %v", err)
	}
	if _, err = call(t, svc, goodKey, "user", `{"user":"nobody_here"}`); err == nil || !strings.Contains(err.Error(), "Could not find user with username: [nobody_here]") {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err = call(t, svc, goodKey, "posts", `{"user":"nobody_here"}`); err == nil || !strings.Contains(err.Error(), "Could not find user") {
		t.Fatalf("posts of an unknown user: %v", err)
	}
	if _, err = call(t, svc, goodKey, "posts", `{"user":"locked"}`); err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Fatalf("protected timeline: %v", err)
	}
	if _, err = call(t, svc, goodKey, "post", `{"post":"404"}`); err == nil || !strings.Contains(err.Error(), "Could not find tweet with id: [404]") {
		t.Fatalf("unknown post: %v", err)
	}
	if _, err = call(t, svc, goodKey, "delete_everything", `{}`); err == nil || !strings.Contains(err.Error(), "delete_everything") {
		t.Fatalf("unknown tool: %v", err)
	}
	for tool, args := range map[string]string{
		"post":   `{"post":"https://example.com/about"}`,
		"user":   `{"user":"bad name!"}`,
		"posts":  `{"user":"   "}`,
		"search": `{"query":"  "}`,
	} {
		before := svc.count()
		if _, err := call(t, svc, goodKey, tool, args); err == nil || svc.count() != before {
			t.Errorf("%s %s: error %v after %d requests", tool, args, err, svc.count()-before)
		}
	}
}

func TestUser(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "user", `{"user":"@XDevelopers"}`)
	want := []string{
		"id\tusername\tname\tfollowers\tfollowing\tposts\tverified\tprotected\tcreated\tlocation\tbio",
		"2244994945\tXDevelopers\tName XDevelopers\t583423\t2048\t14052\tbusiness\tfalse\t2013-12-14\tSan Francisco, CA\tBio of XDevelopers",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(rows, "\n"))
	}
	if got := svc.last().Path; got != "/2/users/by/username/XDevelopers" {
		t.Fatalf("path %s", got)
	}
	rows = mustCall(t, svc, "user", `{"user":"783214"}`)
	if svc.last().Path != "/2/users/783214" || !strings.HasPrefix(rows[1], "783214\tX\tName X\t") {
		t.Fatalf("by id: %v %q", svc.last(), rows)
	}
}

func TestPosts(t *testing.T) {
	svc := newService(t)
	before := svc.count()
	rows := mustCall(t, svc, "posts", `{"user":"jack","limit":25}`)
	if rows[0] != postHeader || len(rows) != 26 || !strings.HasSuffix(rows[25], "\tjack\t34\t3\t2\t1\t1000\tpost 24 by jack") {
		t.Fatalf("%d rows, last %q", len(rows), rows[len(rows)-1])
	}
	// A username costs a lookup first.
	if svc.count()-before != 2 || svc.last().Path != "/2/users/12/tweets" || svc.last().Query().Get("max_results") != "25" {
		t.Fatalf("%d requests, last %v", svc.count()-before, svc.last())
	}
	before = svc.count()
	rows = mustCall(t, svc, "posts", `{"user":"783214","limit":2}`)
	if len(rows) != 3 || svc.count()-before != 1 || svc.last().Query().Get("max_results") != "5" || !strings.HasSuffix(rows[1], "post 0 by X") {
		t.Fatalf("by id: %v %q", svc.last(), rows)
	}
	rows = mustCall(t, svc, "posts", `{"user":"X","limit":99}`)
	if len(rows) != 31 {
		t.Fatalf("capped: %d rows", len(rows))
	}
}

func TestPost(t *testing.T) {
	svc := newService(t)
	rows := mustCall(t, svc, "post", `{"post":"https://x.com/jack/status/20?s=46"}`)
	if len(rows) != 2 || rows[0] != postHeader || svc.last().Path != "/2/tweets/20" {
		t.Fatalf("%v %q", svc.last(), rows)
	}
	cells := strings.Split(rows[1], "\t")
	text := cells[len(cells)-1]
	// The long form of the post is the one kept, clipped.
	if len(cells) != 9 || cells[2] != "jack" || len([]rune(text)) != 281 || !strings.HasSuffix(text, "…") || strings.Contains(text, "t.co") {
		t.Fatalf("text not the clipped long form: %d cells, %d runes: %q", len(cells), len([]rune(text)), rows[1])
	}
	mustCall(t, svc, "post", `{"post":"https://twitter.com/i/web/status/1846987139428634858"}`)
	if got := svc.last().Path; got != "/2/tweets/1846987139428634858" {
		t.Fatalf("id from URL: %q", got)
	}
}
