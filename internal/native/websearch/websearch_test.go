package websearch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/native/websearch"
	"github.com/guilds/guilds/internal/tools"
)

const key = "tvly-test-key-0123456789"

// fakeTavily speaks Tavily's search wire format: POST /search with a Bearer
// key and {"query","search_depth","max_results"}; it answers results, or the
// status the query names (401, 429, 500, 432).
type fakeTavily struct {
	*httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	auth []string
}

func newFake(t *testing.T) *fakeTavily {
	f := &fakeTavily{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"detail":{"error":"bad json"}}`))
			return
		}
		f.mu.Lock()
		f.got = append(f.got, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"detail":{"error":"Unauthorized: missing or invalid API key."}}`))
			return
		}
		switch body["query"] {
		case "rate":
			w.Header().Set("Retry-After", "17")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"detail":{"error":"Too many requests"}}`))
			return
		case "boom":
			w.WriteHeader(502)
			_, _ = w.Write([]byte(`{"detail":"upstream failure"}`))
			return
		case "plan":
			w.WriteHeader(432)
			_, _ = w.Write([]byte(`{"detail":{"error":"This request exceeds your plan's set usage limit."}}`))
			return
		}
		_, _ = w.Write([]byte(`{"query":"` + body["query"].(string) + `","answer":null,"images":[],"response_time":1.2,
			"results":[{"title":"Go 1.24 Release Notes","url":"https://go.dev/doc/go1.24","content":"Go 1.24 arrives six months after Go 1.23.\n Most of its changes are in the toolchain.","score":0.9,"raw_content":null},
			{"title":"Second","url":"https://example.com/2","content":"` + strings.Repeat("word ", 200) + `","score":0.5}]}`))
	}))
	t.Cleanup(f.Close)
	return f
}

func registry(base string, k string) *tools.Registry {
	reg := tools.NewRegistry()
	websearch.Register(reg, websearch.Deps{Key: func() string { return k }, BaseURL: base})
	return reg
}

func call(reg *tools.Registry, args string) string {
	return reg.Invoke(context.Background(), tools.Call{Name: websearch.ToolName, Args: json.RawMessage(args)})
}

func TestSearchSpeaksTavilysWireFormat(t *testing.T) {
	f := newFake(t)
	out := call(registry(f.URL, key), `{"query":"what is new in Go 1.24","max_results":3}`)
	if !strings.HasPrefix(out, "1. Go 1.24 Release Notes\n   https://go.dev/doc/go1.24\n   Go 1.24 arrives six months after Go 1.23. Most of its changes are in the toolchain.\n\n2. Second\n   https://example.com/2\n") {
		t.Fatalf("result:\n%s", out)
	}
	if len(out) > 1200 {
		t.Errorf("snippets are not clipped: %d bytes", len(out))
	}
	if strings.Contains(out, key) {
		t.Fatal("the key is in the result")
	}
	got := f.got[0]
	if got["query"] != "what is new in Go 1.24" || got["search_depth"] != "advanced" || got["max_results"] != float64(3) || f.auth[0] != "Bearer "+key {
		t.Fatalf("request %v auth %q", got, f.auth[0])
	}
	call(registry(f.URL, key), `{"query":"default count"}`)
	if f.got[1]["max_results"] != float64(5) {
		t.Fatalf("default max_results %v", f.got[1]["max_results"])
	}
}

func TestTavilyErrorsAreClearLines(t *testing.T) {
	f := newFake(t)
	cases := []struct{ key, query, want string }{
		{"tvly-wrong-key-000000", "x", "ERROR: Tavily refused the box's key (HTTP 401): the operator must check TAVILY_API_KEY"},
		{key, "rate", "ERROR: Tavily's rate limit was reached (HTTP 429): retry after 17 seconds"},
		{key, "boom", "ERROR: Tavily failed (HTTP 502): upstream failure; try again later"},
		{key, "plan", "ERROR: Tavily's plan limit for this box's key is reached (HTTP 432): This request exceeds your plan's set usage limit.: the operator must raise it"},
		{"", "x", "ERROR: web search is not set up on this box: the operator must set TAVILY_API_KEY"},
	}
	for _, c := range cases {
		if got := call(registry(f.URL, c.key), `{"query":"`+c.query+`"}`); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.query, got, c.want)
		}
	}
	if got := call(registry("http://127.0.0.1:1", key), `{"query":"x"}`); got != "ERROR: Tavily could not be reached; try again later" {
		t.Errorf("unreachable: %s", got)
	}
}
