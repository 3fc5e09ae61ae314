// Package twitterapi is the local adapter for TwitterAPI.io: the login's key
// goes in the x-api-key header of every request, and each tool answers a
// compact TSV table.
package twitterapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/xpost"
)

// Name is the catalog's config.adapter for this service.
const Name = "twitterapi"

const keyHeader = "x-api-key"

// maxPages bounds the pages one list call reads: the service pages by 20
// tweets, so MaxRows needs two.
const maxPages = 3

func init() { adapters.Register(Adapter{}) }

// Adapter implements adapters.Adapter for TwitterAPI.io.
type Adapter struct{}

func (Adapter) Name() string { return Name }

// Check asks the account endpoint, which answers with the credit balance
// only when the key is valid. No hint: the balance changes on every call.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	var info struct {
		RechargeCredits *json.Number `json:"recharge_credits"`
	}
	if err := adapters.Rejection(c.GetJSON(ctx, "/oapi/my/info", nil, header(c), &info)); err != nil {
		return "", err
	}
	if info.RechargeCredits == nil {
		return "", errors.New("the service's account answer has no credit balance")
	}
	return "", nil
}

var tools = adapters.Handlers[args]{
	"search":    search,
	"user":      userInfo,
	"posts":     posts,
	"post":      post,
	"followers": followers,
	"following": following,
	"mentions":  mentions,
	"replies":   replies,
	"quotes":    quotes,
	"trends":    trends,
}

// args is the union of the tools' arguments (the manifest's schemas).
type args struct {
	Query    string `json:"query"`
	User     string `json:"user"`
	Username string `json:"username"`
	Post     string `json:"post"`
	Limit    int    `json:"limit"`
	WOEID    *int   `json:"woeid"`
}

func (Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	return tools.Call(ctx, c, Name, tool, raw)
}

func header(c adapters.Conn) http.Header {
	return http.Header{keyHeader: {c.Cred.AccessToken}}
}

// get reads one answer and turns the service's in-body failure
// ({"status":"error","msg":…}, sent with a 200 too) into an error.
func get(ctx context.Context, c adapters.Conn, path string, q url.Values, out interface{ failure() error }) error {
	if err := c.GetJSON(ctx, path, q, header(c), out); err != nil {
		return err
	}
	return out.failure()
}

// envelope is the status part every data endpoint answers with.
type envelope struct {
	Status  string `json:"status"`
	Msg     string `json:"msg"`
	Message string `json:"message"`
}

func (e envelope) failure() error {
	if e.Status != "error" {
		return nil
	}
	msg := e.Msg
	if msg == "" {
		msg = e.Message
	}
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Errorf("the service answered an error: %s", msg)
}

func search(ctx context.Context, c adapters.Conn, in args) (string, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", errors.New("search: query is empty")
	}
	// The tool covers the last day; a query naming its own window keeps it.
	if !strings.Contains(q, "since:") && !strings.Contains(q, "since_time:") {
		q += " since:" + time.Now().UTC().Add(-24*time.Hour).Format("2006-01-02_15:04:05") + "_UTC"
	}
	ts, err := tweetPages(ctx, c, "/twitter/tweet/advanced_search", url.Values{"query": {q}, "queryType": {"Top"}}, adapters.Rows(in.Limit))
	if err != nil {
		return "", err
	}
	return tweetTable(ts), nil
}

func posts(ctx context.Context, c adapters.Conn, in args) (string, error) {
	q, err := userQuery(in.User)
	if err != nil {
		return "", fmt.Errorf("posts: %w", err)
	}
	ts, err := tweetPages(ctx, c, "/twitter/user/last_tweets", q, adapters.Rows(in.Limit))
	if err != nil {
		return "", err
	}
	return tweetTable(ts), nil
}

func mentions(ctx context.Context, c adapters.Conn, in args) (string, error) {
	name, err := username(in.Username)
	if err != nil {
		return "", fmt.Errorf("mentions: %w", err)
	}
	ts, err := tweetPages(ctx, c, "/twitter/user/mentions", url.Values{"userName": {name}}, adapters.Rows(in.Limit))
	if err != nil {
		return "", err
	}
	return tweetTable(ts), nil
}

func replies(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, err := xpost.ID(in.Post)
	if err != nil {
		return "", fmt.Errorf("replies: %w", err)
	}
	ts, err := tweetPages(ctx, c, "/twitter/tweet/replies", url.Values{"tweetId": {id}}, adapters.Rows(in.Limit))
	if err != nil {
		return "", err
	}
	return tweetTable(ts), nil
}

func quotes(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, err := xpost.ID(in.Post)
	if err != nil {
		return "", fmt.Errorf("quotes: %w", err)
	}
	ts, err := tweetPages(ctx, c, "/twitter/tweet/quotes", url.Values{"tweetId": {id}}, adapters.Rows(in.Limit))
	if err != nil {
		return "", err
	}
	return tweetTable(ts), nil
}

func post(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, err := xpost.ID(in.Post)
	if err != nil {
		return "", fmt.Errorf("post: %w", err)
	}
	var out listPage
	if err := get(ctx, c, "/twitter/tweets", url.Values{"tweet_ids": {id}}, &out); err != nil {
		return "", err
	}
	if len(out.Tweets) == 0 {
		return "", fmt.Errorf("post %s was not found", id)
	}
	return tweetTable(out.Tweets[:1]), nil
}

func userInfo(ctx context.Context, c adapters.Conn, in args) (string, error) {
	q, err := userQuery(in.User)
	if err != nil {
		return "", fmt.Errorf("user: %w", err)
	}
	var u *account
	if id := q.Get("userId"); id != "" {
		var out struct {
			envelope
			Users []account `json:"users"`
		}
		if err := get(ctx, c, "/twitter/user/batch_info_by_ids", url.Values{"userIds": {id}}, &out); err != nil {
			return "", err
		}
		if len(out.Users) > 0 {
			u = &out.Users[0]
		}
	} else {
		var out struct {
			envelope
			Data *account `json:"data"`
		}
		if err := get(ctx, c, "/twitter/user/info", q, &out); err != nil {
			return "", err
		}
		u = out.Data
	}
	if u == nil || u.ID == "" {
		return "", fmt.Errorf("user %s was not found", in.User)
	}
	return profileTable(*u), nil
}

func followers(ctx context.Context, c adapters.Conn, in args) (string, error) {
	return follows(ctx, c, in, "followers", "/twitter/user/followers")
}

func following(ctx context.Context, c adapters.Conn, in args) (string, error) {
	return follows(ctx, c, in, "following", "/twitter/user/followings")
}

func follows(ctx context.Context, c adapters.Conn, in args, tool, path string) (string, error) {
	name, err := username(in.Username)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	n := adapters.Rows(in.Limit)
	// One page is enough: the service's smallest page (20) or n.
	q := url.Values{"userName": {name}, "pageSize": {strconv.Itoa(max(n, 20))}}
	var out listPage
	if err := get(ctx, c, path, q, &out); err != nil {
		return "", err
	}
	us := out.Followers
	if tool == "following" {
		us = out.Followings
	}
	return accountTable(us[:min(n, len(us))]), nil
}

func trends(ctx context.Context, c adapters.Conn, in args) (string, error) {
	woeid := 1
	if in.WOEID != nil {
		woeid = *in.WOEID
	}
	if woeid <= 0 {
		return "", fmt.Errorf("trends: woeid %d is not a place id (1 is worldwide)", woeid)
	}
	var out struct {
		envelope
		Trends []trendItem `json:"trends"`
	}
	if err := get(ctx, c, "/twitter/trends", url.Values{"woeid": {strconv.Itoa(woeid)}}, &out); err != nil {
		return "", err
	}
	n := adapters.Rows(in.Limit)
	t := adapters.NewTable("rank", "name", "query", "meta")
	for i, it := range out.Trends {
		if i == n {
			break
		}
		tr := it.unwrap()
		rank := int64(tr.Rank)
		if rank == 0 {
			rank = int64(i + 1)
		}
		t.Add(rank, tr.Name, tr.Target.Query, tr.MetaDescription)
	}
	return t.String(), nil
}
