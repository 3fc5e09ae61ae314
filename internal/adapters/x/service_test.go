package x_test

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

const goodKey = "AAAAAAAAAAAAAAAAAAAAAFk3%2Fbearer%3DTok7c1e9d"

// fakeService answers like the X API v2 under /2: the token as
// Authorization: Bearer, answers as {"data", "includes", "meta"}, a missing
// resource as a 200 holding only "errors", other failures as problem JSON.
type fakeService struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*url.URL
}

// api is the base URL a catalog row would hold (https://api.x.com/2).
func (f *fakeService) api() string { return f.URL + "/2" }

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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// The accounts the fake knows, by username.
var accounts = map[string]string{"X": "783214", "XDevelopers": "2244994945", "jack": "12", "locked": "777"}

func usernameOf(id string) string {
	for name, uid := range accounts {
		if uid == id {
			return name
		}
	}
	return ""
}

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL)
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+goodKey {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"})
		return
	}
	q := r.URL.Query()
	if !knownFields(w, q) {
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/2")
	switch {
	case path == "/tweets/search/recent":
		if !pageSize(w, q, 10) {
			return
		}
		switch {
		case strings.Contains(q.Get("query"), "ratelimited"):
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429})
		case strings.Contains(q.Get("query"), "nothing"):
			writeJSON(w, 200, map[string]any{"meta": map[string]any{"result_count": 0}})
		default:
			writeJSON(w, 200, postPage(q, 45, "XDevelopers"))
		}
	case strings.HasPrefix(path, "/users/by/username/"):
		name := strings.TrimPrefix(path, "/users/by/username/")
		id, ok := accounts[name]
		if !ok {
			writeJSON(w, 200, notFound("user", "username", name))
			return
		}
		writeJSON(w, 200, map[string]any{"data": userJSON(id, name, q)})
	case strings.HasSuffix(path, "/tweets") && strings.HasPrefix(path, "/users/"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/users/"), "/tweets")
		if !pageSize(w, q, 5) {
			return
		}
		if id == accounts["locked"] {
			writeJSON(w, 200, map[string]any{"errors": []any{map[string]any{"value": id, "detail": "Sorry, you are not authorized to see the user with id: [" + id + "].",
				"title": "Authorization Error", "resource_type": "user", "parameter": "id", "resource_id": id,
				"type": "https://api.twitter.com/2/problems/not-authorized-for-resource"}}})
			return
		}
		writeJSON(w, 200, postPage(q, 40, usernameOf(id)))
	case strings.HasPrefix(path, "/users/"):
		id := strings.TrimPrefix(path, "/users/")
		name := usernameOf(id)
		if name == "" {
			writeJSON(w, 200, notFound("user", "id", id))
			return
		}
		writeJSON(w, 200, map[string]any{"data": userJSON(id, name, q)})
	case strings.HasPrefix(path, "/tweets/"):
		id := strings.TrimPrefix(path, "/tweets/")
		if id == "404" {
			writeJSON(w, 200, notFound("tweet", "id", id))
			return
		}
		p := postJSON(0, "jack")
		p["id"] = id
		p["text"] = strings.Repeat("ab\tc\n", 56) + "https://t.co/abc"
		p["note_tweet"] = map[string]any{"text": strings.Repeat("ab\tc\n", 100), "entities": map[string]any{"urls": []any{}}}
		writeJSON(w, 200, map[string]any{"data": p, "includes": includes("jack")})
	default:
		writeJSON(w, 404, map[string]any{"errors": []any{map[string]any{"message": "The requested resource could not be found."}},
			"title": "Not Found Error", "detail": "Sorry, that page does not exist", "type": "about:blank", "status": 404})
	}
}

// The field names the service accepts (a subset of its reference).
var fieldNames = map[string]map[string]bool{
	"user.fields": set("created_at", "description", "entities", "id", "location", "most_recent_tweet_id", "name",
		"pinned_tweet_id", "profile_image_url", "protected", "public_metrics", "url", "username", "verified", "verified_type", "withheld"),
	"tweet.fields": set("attachments", "author_id", "conversation_id", "created_at", "edit_history_tweet_ids", "entities",
		"id", "in_reply_to_user_id", "lang", "note_tweet", "public_metrics", "referenced_tweets", "text"),
	"expansions": set("author_id", "attachments.media_keys", "referenced_tweets.id", "in_reply_to_user_id"),
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// knownFields answers the service's 400 for a field name it does not know;
// it reports whether the request may go on.
func knownFields(w http.ResponseWriter, q url.Values) bool {
	for param, names := range fieldNames {
		v := q.Get(param)
		if v == "" {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if !names[f] {
				writeJSON(w, 400, map[string]any{
					"errors": []any{map[string]any{"parameters": map[string]any{param: []string{v}},
						"message": fmt.Sprintf("The `%s` query parameter value [%s] is not one of the allowed values", param, f)}},
					"title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
					"type": "https://api.twitter.com/2/problems/invalid-request"})
				return false
			}
		}
	}
	return true
}

// pageSize answers the service's 400 when max_results is outside
// [least, 100]; it reports whether the request may go on.
func pageSize(w http.ResponseWriter, q url.Values, least int) bool {
	v := q.Get("max_results")
	if v == "" {
		return true
	}
	n, err := strconv.Atoi(v)
	if err == nil && n >= least && n <= 100 {
		return true
	}
	writeJSON(w, 400, map[string]any{
		"errors": []any{map[string]any{"parameters": map[string]any{"max_results": []string{v}},
			"message": fmt.Sprintf("The `max_results` query parameter value [%s] is not between %d and 100", v, least)}},
		"title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
		"type": "https://api.twitter.com/2/problems/invalid-request"})
	return false
}

func notFound(kind, param, value string) map[string]any {
	return map[string]any{"errors": []any{map[string]any{"value": value, "detail": fmt.Sprintf("Could not find %s with %s: [%s].", kind, param, value),
		"title": "Not Found Error", "resource_type": kind, "parameter": param, "resource_id": value,
		"type": "https://api.twitter.com/2/problems/resource-not-found"}}}
}

// postPage is one page of total posts by author, max_results long.
func postPage(q url.Values, total int, author string) map[string]any {
	size := 10
	if v := q.Get("max_results"); v != "" {
		size, _ = strconv.Atoi(v)
	}
	n := min(size, total)
	var ps []any
	for i := range n {
		ps = append(ps, postJSON(i, author))
	}
	return map[string]any{"data": ps, "includes": includes(author), "meta": map[string]any{
		"newest_id": "1846987139428634000", "oldest_id": "1846987139428633999", "result_count": n, "next_token": "b26v89c19zqg8o3fpds"}}
}

func includes(author string) map[string]any {
	return map[string]any{"users": []any{map[string]any{"id": accounts[author], "name": "Name " + author, "username": author,
		"profile_image_url": "https://pbs.twimg.com/profile_images/pic_normal.jpg"}}}
}

func postJSON(i int, author string) map[string]any {
	id := strconv.Itoa(1846987139428634000 + i)
	return map[string]any{
		"id": id, "edit_history_tweet_ids": []string{id}, "author_id": accounts[author],
		"text":       fmt.Sprintf("post %d by %s", i, author),
		"created_at": "2024-12-10T07:00:30.000Z", "lang": "en",
		"public_metrics": map[string]any{"retweet_count": 3, "reply_count": 2, "like_count": 10 + i, "quote_count": 1,
			"bookmark_count": 0, "impression_count": 1000},
		"entities": map[string]any{"urls": []any{map[string]any{"url": "https://t.co/abc", "expanded_url": "https://pbs.twimg.com/media/photo.jpg",
			"images": []any{map[string]any{"url": "https://pbs.twimg.com/news_img/1.jpg"}}}}},
		"attachments": map[string]any{"media_keys": []string{"3_1"}},
	}
}

// userJSON is a user with the fields asked for in user.fields (and a
// profile image, to check the adapter leaves it out).
func userJSON(id, name string, q url.Values) map[string]any {
	u := map[string]any{"id": id, "name": "Name " + name, "username": name}
	fields := q.Get("user.fields")
	all := map[string]any{
		"created_at": "2013-12-14T04:35:55.000Z", "description": "Bio of\t" + name, "location": "San Francisco, CA",
		"verified": true, "verified_type": "business", "protected": name == "locked",
		"public_metrics":    map[string]any{"followers_count": 583423, "following_count": 2048, "tweet_count": 14052, "listed_count": 1672, "like_count": 3, "media_count": 9},
		"profile_image_url": "https://pbs.twimg.com/profile_images/pic_normal.jpg",
	}
	for _, f := range strings.Split(fields, ",") {
		if v, ok := all[f]; ok {
			u[f] = v
		}
	}
	u["profile_image_url"] = all["profile_image_url"]
	return u
}
