package gmail_test

import (
	"encoding/base64"
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

const goodToken = "ya29.a0AfB_byCgoodTokenSecretValue9f3e"

// fakeService answers like the Gmail API under /gmail/v1: the access token
// as Authorization: Bearer, resources as the service's JSON, failures as
// Google's {"error": {code, message, errors, status}}.
type fakeService struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	posted   []map[string]any // bodies of POST requests
}

// api is the base URL a catalog row holds (https://gmail.googleapis.com/gmail/v1).
func (f *fakeService) api() string { return f.URL + "/gmail/v1" }

func newService(t testing.TB) *fakeService {
	f := &fakeService{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeService) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// find returns the requests whose path ends with suffix.
func (f *fakeService) find(suffix string) []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*http.Request
	for _, r := range f.requests {
		if strings.HasSuffix(r.URL.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeService) lastPost() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posted[len(f.posted)-1]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func googleError(w http.ResponseWriter, code int, status, reason, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status,
		"errors": []any{map[string]any{"message": msg, "domain": "global", "reason": reason}}}})
}

const (
	threadTotal = 45
	draftTotal  = 20
	// Messages with a body of their own kind.
	htmlOnlyID = "aaaa000000000001"
	longID     = "aaaa000000000002"
	latin1ID   = "aaaa000000000003"
)

func threadID(i int) string { return fmt.Sprintf("%016x", 0x18c0000000000000+i) }

func messageID(thread, j int) string { return fmt.Sprintf("%016x", 0x18c1000000000000+thread*10+j) }

func draftID(i int) string { return "r-" + strconv.Itoa(5000000000000000000+i) }

func b64(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	var posted map[string]any
	if r.Method == http.MethodPost {
		_ = json.NewDecoder(r.Body).Decode(&posted)
	}
	f.mu.Lock()
	f.requests = append(f.requests, r)
	if posted != nil {
		f.posted = append(f.posted, posted)
	}
	f.mu.Unlock()
	switch r.Header.Get("Authorization") {
	case "Bearer " + goodToken:
	case "Bearer scope-too-narrow":
		googleError(w, 403, "PERMISSION_DENIED", "insufficientPermissions", "Request had insufficient authentication scopes.")
		return
	case "Bearer service-down":
		googleError(w, 503, "UNAVAILABLE", "backendError", "The service is currently unavailable.")
		return
	default:
		googleError(w, 401, "UNAUTHENTICATED", "authError",
			"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	q := r.URL.Query()
	path, ok := strings.CutPrefix(r.URL.Path, "/gmail/v1/users/me")
	if !ok {
		googleError(w, 404, "NOT_FOUND", "notFound", "Not Found")
		return
	}
	if r.Method == http.MethodPost {
		f.create(w, path, posted)
		return
	}
	switch {
	case path == "/profile":
		writeJSON(w, 200, map[string]any{"emailAddress": "ada@example.com", "messagesTotal": 1204, "threadsTotal": 830, "historyId": "98765"})
	case path == "/threads":
		if !pageSize(w, q) {
			return
		}
		switch {
		case strings.Contains(q.Get("q"), "ratelimited"):
			googleError(w, 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Too many concurrent requests for user.")
		case strings.Contains(q.Get("q"), "nothing"):
			writeJSON(w, 200, map[string]any{"resultSizeEstimate": 0})
		default:
			n := min(atoi(q.Get("maxResults"), 100), threadTotal)
			var ts []any
			for i := range n {
				ts = append(ts, map[string]any{"id": threadID(i), "snippet": fmt.Sprintf("It&#39;s thread %d &amp; more", i), "historyId": "9000"})
			}
			writeJSON(w, 200, map[string]any{"threads": ts, "nextPageToken": "09876543210", "resultSizeEstimate": threadTotal})
		}
	case strings.HasPrefix(path, "/threads/"):
		i := indexOf(strings.TrimPrefix(path, "/threads/"), threadID, threadTotal)
		if i < 0 {
			googleError(w, 404, "NOT_FOUND", "notFound", "Requested entity was not found.")
			return
		}
		ms := []any{messageJSON(i, 0, q), messageJSON(i, 1, q)}
		writeJSON(w, 200, map[string]any{"id": threadID(i), "historyId": "9000", "messages": ms})
	case strings.HasPrefix(path, "/messages/"):
		id := strings.TrimPrefix(path, "/messages/")
		if m := specialMessage(id); m != nil {
			writeJSON(w, 200, m)
			return
		}
		for i := range threadTotal {
			for j := range 2 {
				if messageID(i, j) == id {
					writeJSON(w, 200, messageJSON(i, j, q))
					return
				}
			}
		}
		googleError(w, 404, "NOT_FOUND", "notFound", "Requested entity was not found.")
	case path == "/labels":
		var ls []any
		for _, id := range []string{"CHAT", "SENT", "INBOX", "IMPORTANT", "TRASH", "DRAFT", "SPAM", "CATEGORY_FORUMS",
			"CATEGORY_UPDATES", "CATEGORY_PERSONAL", "CATEGORY_PROMOTIONS", "CATEGORY_SOCIAL", "STARRED", "UNREAD"} {
			ls = append(ls, map[string]any{"id": id, "name": id, "type": "system"})
		}
		for _, name := range []string{"Receipts", "clients/Acme", "Travel"} {
			ls = append(ls, map[string]any{"id": "Label_" + strconv.Itoa(len(ls)), "name": name, "type": "user",
				"messageListVisibility": "show", "labelListVisibility": "labelShow", "color": map[string]any{"textColor": "#000000", "backgroundColor": "#ffffff"}})
		}
		writeJSON(w, 200, map[string]any{"labels": ls})
	case path == "/drafts":
		if !pageSize(w, q) {
			return
		}
		n := min(atoi(q.Get("maxResults"), 100), draftTotal)
		var ds []any
		for i := range n {
			ds = append(ds, map[string]any{"id": draftID(i), "message": map[string]any{"id": messageID(100+i, 0), "threadId": threadID(100 + i)}})
		}
		writeJSON(w, 200, map[string]any{"drafts": ds, "resultSizeEstimate": draftTotal})
	case strings.HasPrefix(path, "/drafts/"):
		i := indexOf(strings.TrimPrefix(path, "/drafts/"), draftID, draftTotal)
		if i < 0 {
			googleError(w, 404, "NOT_FOUND", "notFound", "Requested entity was not found.")
			return
		}
		m := messageJSON(100+i, 0, q)
		m["labelIds"] = []string{"DRAFT"}
		writeJSON(w, 200, map[string]any{"id": draftID(i), "message": m})
	default:
		googleError(w, 404, "NOT_FOUND", "notFound", "Not Found")
	}
}

// create answers drafts.create and messages.send: the raw message must be
// base64url RFC 2822 with a To header.
func (f *fakeService) create(w http.ResponseWriter, path string, body map[string]any) {
	msg := body
	if path == "/drafts" {
		msg, _ = body["message"].(map[string]any)
	} else if path != "/messages/send" {
		googleError(w, 404, "NOT_FOUND", "notFound", "Not Found")
		return
	}
	raw, _ := msg["raw"].(string)
	decoded, err := base64.URLEncoding.DecodeString(raw)
	if err != nil || !strings.Contains(string(decoded), "To: ") {
		googleError(w, 400, "INVALID_ARGUMENT", "invalidArgument", "Invalid To header")
		return
	}
	thread, _ := msg["threadId"].(string)
	if thread == "" {
		thread = "18c9000000000001"
	}
	if path == "/drafts" {
		writeJSON(w, 200, map[string]any{"id": "r-777", "message": map[string]any{"id": "18c9000000000002", "threadId": thread, "labelIds": []string{"DRAFT"}}})
		return
	}
	writeJSON(w, 200, map[string]any{"id": "18c9000000000003", "threadId": thread, "labelIds": []string{"SENT"}})
}

// pageSize answers the service's 400 for maxResults outside 1..500.
func pageSize(w http.ResponseWriter, q url.Values) bool {
	v := q.Get("maxResults")
	if v == "" {
		return true
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= 500 {
		return true
	}
	googleError(w, 400, "INVALID_ARGUMENT", "invalidArgument", "Invalid value for maxResults")
	return false
}

func atoi(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func indexOf(id string, name func(int) string, n int) int {
	for i := range n + 200 {
		if name(i) == id {
			return i
		}
	}
	return -1
}

func headersJSON(hs ...string) []any {
	var out []any
	for i := 0; i+1 < len(hs); i += 2 {
		if hs[i+1] == "" {
			continue
		}
		out = append(out, map[string]any{"name": hs[i], "value": hs[i+1]})
	}
	return out
}

// messageJSON is message j of thread i in the format asked: "metadata"
// keeps the headers named in metadataHeaders and no bodies, "full" (the
// default) the whole MIME tree with an HTML alternative and an attachment.
func messageJSON(i, j int, q url.Values) map[string]any {
	subject := fmt.Sprintf("Quarterly report %d", i)
	body := fmt.Sprintf("Hello\tAda,\nthe figures for %d are in.\n", i)
	if j == 1 {
		subject = "Re: " + subject
		body = "Thanks, looks good!\n\nOn Mon, Ada wrote:\n> the figures are in\n> quoted line\n"
	}
	all := headersJSON(
		"Delivered-To", "ada@example.com",
		"Received", "from mail-sor-f41.google.com by mx.google.com",
		"From", fmt.Sprintf("Bob %d <bob%d@example.org>", j, i),
		"To", "Ada <ada@example.com>",
		"Subject", subject,
		"Date", "Tue, 10 Dec 2024 08:00:30 +0100",
		"Message-ID", fmt.Sprintf("<msg-%d-%d@mail.example.org>", i, j),
		"References", func() string {
			if j == 1 {
				return fmt.Sprintf("<msg-%d-0@mail.example.org>", i)
			}
			return ""
		}(),
	)
	m := map[string]any{"id": messageID(i, j), "threadId": threadID(i), "labelIds": []string{"INBOX", "UNREAD"},
		"snippet": "Hello Ada, the figures&#39; summary", "historyId": "9001", "sizeEstimate": 4821,
		"internalDate": strconv.FormatInt(1733814030000+int64(j)*3600000, 10)}
	if q.Get("format") == "metadata" {
		want := q["metadataHeaders"]
		var hs []any
		for _, h := range all {
			name := h.(map[string]any)["name"].(string)
			keep := len(want) == 0
			for _, w := range want {
				keep = keep || strings.EqualFold(w, name)
			}
			if keep {
				hs = append(hs, h)
			}
		}
		m["payload"] = map[string]any{"partId": "", "mimeType": "multipart/mixed", "filename": "", "headers": hs, "body": map[string]any{"size": 0}}
		return m
	}
	m["payload"] = map[string]any{"partId": "", "mimeType": "multipart/mixed", "filename": "", "headers": all, "body": map[string]any{"size": 0},
		"parts": []any{
			map[string]any{"partId": "0", "mimeType": "multipart/alternative", "filename": "", "headers": headersJSON("Content-Type", "multipart/alternative"),
				"body": map[string]any{"size": 0}, "parts": []any{
					map[string]any{"partId": "0.0", "mimeType": "text/plain", "filename": "", "headers": headersJSON("Content-Type", "text/plain; charset=UTF-8"),
						"body": map[string]any{"size": len(body), "data": b64(body)}},
					map[string]any{"partId": "0.1", "mimeType": "text/html", "filename": "", "headers": headersJSON("Content-Type", "text/html; charset=UTF-8"),
						"body": map[string]any{"size": 40, "data": b64("<div dir=\"ltr\"><p>HTML twin</p></div>")}},
				}},
			map[string]any{"partId": "1", "mimeType": "application/pdf", "filename": "report.pdf", "headers": headersJSON("Content-Disposition", "attachment"),
				"body": map[string]any{"attachmentId": "ANGjdJ8abc", "size": 52000}},
		}}
	return m
}

// specialMessage is one of the messages with an unusual body.
func specialMessage(id string) map[string]any {
	var mime, data string
	switch id {
	case htmlOnlyID:
		mime = "text/html"
		data = b64(`<html><head><title>Newsletter</title><style>p{color:red}</style></head><body><p>Big&nbsp;news &amp; more</p>` +
			`<script>track()</script><div>Second<br>line</div><img src="https://t.example/pixel.gif"></body></html>`)
	case longID:
		mime = "text/plain"
		data = base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("é", 9000)))
	case latin1ID:
		mime = "text/plain"
		data = b64("Caf\xe9 cr\xe8me")
	default:
		return nil
	}
	return map[string]any{"id": id, "threadId": "18cf000000000000", "labelIds": []string{"INBOX"}, "snippet": "", "internalDate": "1733814030000",
		"payload": map[string]any{"partId": "", "mimeType": mime, "filename": "", "headers": headersJSON("From", "news@example.com", "Subject", "News"),
			"body": map[string]any{"size": 100, "data": data}}}
}
