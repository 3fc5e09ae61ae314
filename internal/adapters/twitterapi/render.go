package twitterapi

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// textRunes is where post text is cut: a post's classic length.
const textRunes = 280

func tweetTable(ts []tweet) string {
	t := adapters.NewTable("id", "created", "author", "likes", "reposts", "replies", "quotes", "views", "text")
	for _, tw := range ts {
		t.Add(string(tw.ID), minute(tw.CreatedAt), tw.Author.UserName, int64(tw.LikeCount), int64(tw.RetweetCount),
			int64(tw.ReplyCount), int64(tw.QuoteCount), int64(tw.ViewCount), adapters.Clip(tw.Text, textRunes))
	}
	return t.String()
}

func accountTable(us []account) string {
	t := adapters.NewTable("id", "username", "name", "followers", "following", "posts", "verified")
	for _, u := range us {
		t.Add(string(u.ID), u.handle(), u.Name, int64(u.followers()), int64(u.following()), int64(u.postCount()), u.isVerified())
	}
	return t.String()
}

func profileTable(u account) string {
	t := adapters.NewTable("id", "username", "name", "followers", "following", "posts", "verified", "created", "location", "bio")
	t.Add(string(u.ID), u.handle(), u.Name, int64(u.followers()), int64(u.following()), int64(u.postCount()),
		u.isVerified(), u.created(), u.Location, adapters.Clip(u.Description, textRunes))
	return t.String()
}

var (
	digits   = regexp.MustCompile(`^[0-9]{1,25}$`)
	handleRe = regexp.MustCompile(`^[A-Za-z0-9_]{1,50}$`)
)

// username takes a handle with or without its @.
func username(s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "@")
	if !handleRe.MatchString(s) {
		return "", fmt.Errorf("%q is not a username", s)
	}
	return s, nil
}

// userQuery is the query naming a user: an all-digit value is a user id,
// anything else a username.
func userQuery(s string) (url.Values, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("user is empty")
	}
	if digits.MatchString(s) {
		return url.Values{"userId": {s}}, nil
	}
	name, err := username(s)
	if err != nil {
		return nil, err
	}
	return url.Values{"userName": {name}}, nil
}
