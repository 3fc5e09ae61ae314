package twitterapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const goodKey = "tapi-key-5f3c9e1d"

// fakeService answers like api.twitterapi.io: the key in x-api-key, pages
// of 20 tweets with has_next_page/next_cursor, failures as a JSON body.
type fakeService struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*url.URL
}

func (f *fakeService) last() *url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

func (f *fakeService) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func newService(t testing.TB) *fakeService {
	f := &fakeService{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL)
	f.mu.Unlock()
	if r.Header.Get("X-API-Key") != goodKey {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": 401, "message": "Unauthorized, please check your api key"})
		return
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/oapi/my/info":
		writeJSON(w, 200, map[string]any{"recharge_credits": 98765, "total_bonus_credits": 100000})
	case "/twitter/tweet/advanced_search":
		if strings.Contains(q.Get("query"), "ratelimited") {
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": 429, "message": "Too many requests, slow down"})
			return
		}
		writeJSON(w, 200, tweetPage(q.Get("cursor"), 45, "tweets", "search"))
	case "/twitter/user/last_tweets":
		// The live answer nests the timeline under data.
		name := q.Get("userName")
		if id := q.Get("userId"); id != "" {
			name = "byid" + id
		}
		p := tweetPage(q.Get("cursor"), 40, "tweets", name)
		writeJSON(w, 200, map[string]any{"status": "success", "code": 0, "msg": "success",
			"data":          map[string]any{"pin_tweet": nil, "tweets": p["tweets"]},
			"has_next_page": p["has_next_page"], "next_cursor": p["next_cursor"]})
	case "/twitter/user/mentions":
		writeJSON(w, 200, tweetPage(q.Get("cursor"), 25, "tweets", "to_"+q.Get("userName")))
	case "/twitter/tweet/replies":
		writeJSON(w, 200, tweetPage(q.Get("cursor"), 22, "replies", "re_"+q.Get("tweetId")))
	case "/twitter/tweet/quotes":
		writeJSON(w, 200, tweetPage(q.Get("cursor"), 8, "tweets", "qt_"+q.Get("tweetId")))
	case "/twitter/tweets":
		id := q.Get("tweet_ids")
		if id == "404" {
			writeJSON(w, 200, map[string]any{"tweets": []any{}, "status": "success", "msg": "success"})
			return
		}
		tw := tweetJSON(0, "jack")
		tw["id"] = id
		tw["text"] = strings.Repeat("ab\tc\n", 100)
		writeJSON(w, 200, map[string]any{"tweets": []any{tw}, "status": "success", "msg": "success"})
	case "/twitter/user/info":
		if q.Get("userName") == "nobody_here" {
			writeJSON(w, 200, map[string]any{"status": "error", "msg": "User not found"})
			return
		}
		writeJSON(w, 200, map[string]any{"data": userJSON(q.Get("userName"), 44196397), "status": "success", "msg": "success"})
	case "/twitter/user/batch_info_by_ids":
		id, _ := strconv.Atoi(q.Get("userIds"))
		writeJSON(w, 200, map[string]any{"users": []any{userJSON("by_id", id)}, "status": "success", "msg": "success"})
	case "/twitter/user/followers":
		size, _ := strconv.Atoi(q.Get("pageSize"))
		var us []any
		for i := range max(size, 20) {
			us = append(us, userJSON(fmt.Sprintf("fan%d", i), 1000+i))
		}
		writeJSON(w, 200, map[string]any{"followers": us, "has_next_page": true, "next_cursor": "c1", "status": "success", "msg": "success"})
	case "/twitter/user/followings":
		// Follow lists have also been answered in the older snake_case shape.
		var us []any
		for i := range 200 {
			us = append(us, map[string]any{"id": 2000 + i, "id_str": strconv.Itoa(2000 + i), "screen_name": fmt.Sprintf("idol%d", i),
				"name": "Idol", "followers_count": 5000, "friends_count": 10, "following": false, "statuses_count": 77,
				"verified": true, "created_at": "Wed Mar 21 20:50:14 +0000 2007",
				"profile_image_url_https": "https://pbs.twimg.com/profile_images/idol.jpg"})
		}
		writeJSON(w, 200, map[string]any{"followings": us, "has_next_page": true, "next_cursor": "c1", "status": "success", "msg": "success"})
	case "/twitter/trends":
		var ts []any
		for i := range 30 {
			item := map[string]any{"name": fmt.Sprintf("#topic%d", i), "target": map[string]any{"query": fmt.Sprintf("%%23topic%d", i)},
				"rank": i + 1, "meta_description": fmt.Sprintf("%dK posts", 30-i)}
			if q.Get("woeid") == "1" {
				item = map[string]any{"trend": item} // the live shape
			}
			ts = append(ts, item)
		}
		writeJSON(w, 200, map[string]any{"trends": ts, "status": "success", "msg": "success",
			"metadata": map[string]any{"woeid": map[string]any{"name": "Worldwide", "id": 1}}})
	default:
		writeJSON(w, 404, map[string]any{"error": 404, "message": "not found"})
	}
}

// tweetPage is page cursor ("" or "p<n>") of a list of total tweets.
func tweetPage(cursor string, total int, field, author string) map[string]any {
	start := 0
	if cursor != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(cursor, "p"))
	}
	end := min(start+20, total)
	var ts []any
	for i := start; i < end; i++ {
		ts = append(ts, tweetJSON(i, author))
	}
	next := ""
	if end < total {
		next = "p" + strconv.Itoa(end)
	}
	return map[string]any{field: ts, "has_next_page": next != "", "next_cursor": next, "status": "success", "msg": "success"}
}

func tweetJSON(i int, author string) map[string]any {
	return map[string]any{
		"type": "tweet", "id": strconv.Itoa(1846987139428634000 + i), "url": "https://x.com/" + author + "/status/1",
		"text": fmt.Sprintf("post %d by %s", i, author), "source": "<a href=\"https://mobile.twitter.com\">Twitter Web App</a>",
		"retweetCount": 3, "replyCount": 2, "likeCount": 10 + i, "quoteCount": 1, "viewCount": 1000,
		"createdAt": "Tue Dec 10 07:00:30 +0000 2024", "lang": "en", "bookmarkCount": 0, "isReply": false,
		"author":   userJSON(author, 99),
		"entities": map[string]any{"hashtags": []any{}, "urls": []any{}, "user_mentions": []any{}},
		"extendedEntities": map[string]any{"media": []any{map[string]any{
			"media_url_https": "https://pbs.twimg.com/media/photo.jpg", "type": "photo"}}},
	}
}

func userJSON(name string, id int) map[string]any {
	return map[string]any{
		"type": "user", "userName": name, "url": "https://x.com/" + name, "id": strconv.Itoa(id), "name": "Name " + name,
		"isBlueVerified": true, "verifiedType": nil, "profilePicture": "https://pbs.twimg.com/profile_images/pic.jpg",
		"coverPicture": "https://pbs.twimg.com/profile_banners/cover.jpg", "description": "Bio of\t" + name,
		"location": "Paris", "followers": 1200, "following": 300, "canDm": false,
		"createdAt": "Wed Mar 21 20:50:14 +0000 2007", "favouritesCount": 5, "mediaCount": 2, "statusesCount": 4500,
		"pinnedTweetIds": []string{}, "profile_bio": map[string]any{"description": "Bio"},
	}
}
