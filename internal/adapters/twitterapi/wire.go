package twitterapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/guilds/guilds/internal/adapters"
)

// listPage is one page of any list endpoint. Endpoints name their list
// differently (tweets, replies, followers, followings), and the user
// timeline has been seen nesting its tweets under data.
type listPage struct {
	envelope
	Tweets     []tweet   `json:"tweets"`
	Replies    []tweet   `json:"replies"`
	Followers  []account `json:"followers"`
	Followings []account `json:"followings"`
	Data       *struct {
		Tweets []tweet `json:"tweets"`
	} `json:"data"`
	HasNextPage bool   `json:"has_next_page"`
	NextCursor  string `json:"next_cursor"`
}

func (p *listPage) tweets() []tweet {
	out := append(p.Tweets, p.Replies...)
	if p.Data != nil {
		out = append(out, p.Data.Tweets...)
	}
	return out
}

// tweetPages follows the cursor until it holds n tweets or the list ends.
func tweetPages(ctx context.Context, c adapters.Conn, path string, q url.Values, n int) ([]tweet, error) {
	var out []tweet
	for page := 0; page < maxPages && len(out) < n; page++ {
		var p listPage
		if err := get(ctx, c, path, q, &p); err != nil {
			return nil, err
		}
		got := p.tweets()
		out = append(out, got...)
		if !p.HasNextPage || p.NextCursor == "" || len(got) == 0 {
			break
		}
		q.Set("cursor", p.NextCursor)
	}
	return out[:min(n, len(out))], nil
}

type tweet struct {
	ID           flexString `json:"id"`
	Text         string     `json:"text"`
	CreatedAt    string     `json:"createdAt"`
	LikeCount    count      `json:"likeCount"`
	RetweetCount count      `json:"retweetCount"`
	ReplyCount   count      `json:"replyCount"`
	QuoteCount   count      `json:"quoteCount"`
	ViewCount    count      `json:"viewCount"`
	Author       struct {
		UserName string `json:"userName"`
	} `json:"author"`
}

// account is a user as the service sends it: camelCase in its reference,
// while follow lists have also been seen in the older snake_case shape.
type account struct {
	ID             flexString `json:"id"`
	UserName       string     `json:"userName"`
	ScreenName     string     `json:"screen_name"`
	Name           string     `json:"name"`
	Followers      count      `json:"followers"`
	FollowersCount count      `json:"followers_count"`
	Following      count      `json:"following"`
	FollowingCount count      `json:"following_count"`
	FriendsCount   count      `json:"friends_count"`
	Statuses       count      `json:"statusesCount"`
	StatusesCount  count      `json:"statuses_count"`
	IsBlueVerified bool       `json:"isBlueVerified"`
	Verified       bool       `json:"verified"`
	CreatedAt      string     `json:"createdAt"`
	CreatedAtSnake string     `json:"created_at"`
	Location       string     `json:"location"`
	Description    string     `json:"description"`
}

func (a account) handle() string   { return first(a.UserName, a.ScreenName) }
func (a account) followers() count { return firstCount(a.Followers, a.FollowersCount) }
func (a account) following() count { return firstCount(a.Following, a.FollowingCount, a.FriendsCount) }
func (a account) postCount() count { return firstCount(a.Statuses, a.StatusesCount) }
func (a account) created() string  { return day(first(a.CreatedAt, a.CreatedAtSnake)) }
func (a account) isVerified() bool { return a.IsBlueVerified || a.Verified }

type trend struct {
	Name   string `json:"name"`
	Target struct {
		Query string `json:"query"`
	} `json:"target"`
	Rank            count  `json:"rank"`
	MetaDescription string `json:"meta_description"`
}

// trendItem is a trend either flat (the reference) or wrapped in "trend"
// (live answers).
type trendItem struct {
	trend
	Trend *trend `json:"trend"`
}

func (t trendItem) unwrap() trend {
	if t.Trend != nil {
		return *t.Trend
	}
	return t.trend
}

// count is a number that tolerates a string, a bool or null in its place
// (those read as 0), so one odd field never fails a whole answer.
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if n, err := strconv.ParseFloat(string(b), 64); err == nil {
		*c = count(n)
	}
	return nil
}

// flexString is an id sent as a string or a number.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
		return nil
	}
	if string(b) != "null" {
		*s = flexString(b)
	}
	return nil
}

func first(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func firstCount(xs ...count) count {
	for _, x := range xs {
		if x != 0 {
			return x
		}
	}
	return 0
}

// twitterTime is the layout of the service's createdAt values.
const twitterTime = "Mon Jan 02 15:04:05 -0700 2006"

// minute shortens a timestamp to UTC minutes; an unknown layout is kept.
func minute(s string) string {
	if t, ok := parseTime(s); ok {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return s
}

func day(s string) string {
	if t, ok := parseTime(s); ok {
		return t.UTC().Format("2006-01-02")
	}
	return s
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{twitterTime, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
