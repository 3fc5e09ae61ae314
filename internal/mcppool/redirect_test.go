package mcppool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// headerRecorder is a real MCP server that records every request's headers.
type headerRecorder struct {
	*httptest.Server
	mu      sync.Mutex
	seen    []http.Header
	methods []string
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	r := &headerRecorder{}
	h := handshakeOnly(server.NewStreamableHTTPServer(newMCP(), server.WithStateful(true)))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Clone())
		r.methods = append(r.methods, req.Method)
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *headerRecorder) carried(value string) (requests int, carried bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.seen {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, value) {
					carried = true
				}
			}
		}
	}
	return len(r.seen), carried
}

// A server that redirects to another host does not get the login's
// credential sent there: neither Authorization (which Go keeps for the same
// host name on another port) nor a catalog row's own header.
func TestCredentialHeadersDoNotFollowACrossHostRedirect(t *testing.T) {
	for _, tc := range []struct{ name, auth, config, header, key string }{
		{"bearer", "oauth", `{}`, "Authorization", "tok-redirect-1234"},
		{"api key header", "token", `{"header":"X-API-KEY"}`, "X-API-KEY", "key-redirect-5678"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := testdb.New(t)
			other := newHeaderRecorder(t)
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(origin.Close)
			id := addConnection(t, db, "redir"+strings.ReplaceAll(tc.name, " ", ""), origin.URL+"/mcp", tc.auth, tc.config)
			cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {tc.key}}}
			p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
			t.Cleanup(p.Close)
			_, _ = p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`))
			n, carried := other.carried(tc.key)
			if n == 0 {
				t.Fatal("the redirect was not followed; the test proves nothing")
			}
			if carried {
				t.Fatalf("the other host got the credential in %s", tc.header)
			}
		})
	}
}

// calls counts the requests other than a session's closing DELETE.
func (r *headerRecorder) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.methods {
		if m != http.MethodDelete {
			n++
		}
	}
	return n
}

// deletes counts the DELETEs that ended a session.
func (r *headerRecorder) deletes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.methods {
		if m == http.MethodDelete {
			n++
		}
	}
	return n
}
