package x

import (
	"fmt"
	"net/url"
	"time"
)

// The fields asked of every post and of a profile; the answer carries
// nothing else (no media, entities or profile images).
const (
	postFields    = "created_at,public_metrics,author_id,note_tweet"
	profileFields = "created_at,description,location,public_metrics,verified,verified_type,protected"
)

func postQuery() url.Values {
	return url.Values{"tweet.fields": {postFields}, "expansions": {"author_id"}, "user.fields": {"username"}}
}

// problems is the "errors" list the service puts beside (or instead of)
// "data": a partial answer keeps its data, an answer with no data fails.
type problems []problem

type problem struct {
	Title   string `json:"title"`
	Detail  string `json:"detail"`
	Message string `json:"message"`
}

func (ps problems) failure(hasData bool) error {
	if hasData || len(ps) == 0 {
		return nil
	}
	p := ps[0]
	return fmt.Errorf("the service answered an error: %s", first(p.Detail, p.Message, p.Title, "no reason given"))
}

type userAnswer struct {
	Data   *apiUser `json:"data"`
	Errors problems `json:"errors"`
}

func (a *userAnswer) failure() error { return a.Errors.failure(a.Data != nil) }

type postAnswer struct {
	Data     *apiPost `json:"data"`
	Includes includes `json:"includes"`
	Errors   problems `json:"errors"`
}

func (a *postAnswer) failure() error { return a.Errors.failure(a.Data != nil) }

type postsAnswer struct {
	Data     []apiPost `json:"data"`
	Includes includes  `json:"includes"`
	Errors   problems  `json:"errors"`
}

func (a *postsAnswer) failure() error { return a.Errors.failure(len(a.Data) > 0) }

type includes struct {
	Users []apiUser `json:"users"`
}

// authors maps user ids to usernames.
func (i includes) authors() map[string]string {
	m := make(map[string]string, len(i.Users))
	for _, u := range i.Users {
		m[u.ID] = u.Username
	}
	return m
}

type apiPost struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	AuthorID  string `json:"author_id"`
	CreatedAt string `json:"created_at"`
	// A post longer than the classic limit has its full text here.
	NoteTweet *struct {
		Text string `json:"text"`
	} `json:"note_tweet"`
	PublicMetrics struct {
		RetweetCount    int64 `json:"retweet_count"`
		ReplyCount      int64 `json:"reply_count"`
		LikeCount       int64 `json:"like_count"`
		QuoteCount      int64 `json:"quote_count"`
		ImpressionCount int64 `json:"impression_count"`
	} `json:"public_metrics"`
}

func (p apiPost) fullText() string {
	if p.NoteTweet != nil && p.NoteTweet.Text != "" {
		return p.NoteTweet.Text
	}
	return p.Text
}

type apiUser struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	Name          string `json:"name"`
	CreatedAt     string `json:"created_at"`
	Description   string `json:"description"`
	Location      string `json:"location"`
	Verified      bool   `json:"verified"`
	VerifiedType  string `json:"verified_type"`
	Protected     bool   `json:"protected"`
	PublicMetrics struct {
		FollowersCount int64 `json:"followers_count"`
		FollowingCount int64 `json:"following_count"`
		TweetCount     int64 `json:"tweet_count"`
	} `json:"public_metrics"`
}

// verification is the account's badge kind as the service names it
// ("blue", "business", "government", "none"); "yes" when only the flag came.
func (u apiUser) verification() string {
	switch {
	case u.VerifiedType != "":
		return u.VerifiedType
	case u.Verified:
		return "yes"
	}
	return "none"
}

func first(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// minute shortens an RFC 3339 timestamp to UTC minutes; another layout is
// kept as it is.
func minute(s string) string {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return s
}

func day(s string) string {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format("2006-01-02")
	}
	return s
}
