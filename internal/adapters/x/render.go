package x

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// textRunes is where post text and bios are cut: a post's classic length.
const textRunes = 280

func postTable(ps []apiPost, authors map[string]string) string {
	t := adapters.NewTable("id", "created", "author", "likes", "reposts", "replies", "quotes", "views", "text")
	for _, p := range ps {
		m := p.PublicMetrics
		t.Add(p.ID, minute(p.CreatedAt), first(authors[p.AuthorID], p.AuthorID), m.LikeCount, m.RetweetCount,
			m.ReplyCount, m.QuoteCount, m.ImpressionCount, adapters.Clip(p.fullText(), textRunes))
	}
	return t.String()
}

func profileTable(u apiUser) string {
	t := adapters.NewTable("id", "username", "name", "followers", "following", "posts", "verified", "protected", "created", "location", "bio")
	m := u.PublicMetrics
	t.Add(u.ID, u.Username, u.Name, m.FollowersCount, m.FollowingCount, m.TweetCount, u.verification(), u.Protected,
		day(u.CreatedAt), u.Location, adapters.Clip(u.Description, textRunes))
	return t.String()
}

var (
	digits   = regexp.MustCompile(`^[0-9]{1,20}$`)
	handleRe = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)
)

// userRef splits a user argument: an all-digit value is a user id, anything
// else a username (with or without its @).
func userRef(s string) (id, name string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", errors.New("user is empty")
	}
	if digits.MatchString(s) {
		return s, "", nil
	}
	name = strings.TrimPrefix(s, "@")
	if !handleRe.MatchString(name) {
		return "", "", fmt.Errorf("%q is neither a username nor a user id", s)
	}
	return "", name, nil
}
