package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// slowMCP is a stateful MCP server whose "slow" tool and, while stallList is
// set, whose tools/list block until released or the request ends. It counts
// session openings (an initialize, or the first server/discover of a
// stateless session), so a test can tell a reused session from a new one.
type slowMCP struct {
	*httptest.Server
	release   chan struct{}
	stallList atomic.Bool
	inits     atomic.Int64
	discovers atomic.Int64
	ended     atomic.Int64 // blocked requests whose context ended
}

func newSlowMCP(t *testing.T) *slowMCP {
	m := &slowMCP{release: make(chan struct{})}
	s := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		m.block(ctx)
		return mcp.NewToolResultText("late"), nil
	})
	s.AddTool(mcp.NewTool("quick"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("quick answer"), nil
	})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		switch msg.Method {
		case "initialize":
			m.inits.Add(1)
		case "server/discover":
			// A stateless session is opened by a probe; the pool's first
			// session of a server checks the answer with a second one.
			if m.discovers.Add(1)%2 == 1 {
				m.inits.Add(1)
			}
		case "tools/list":
			if m.stallList.Load() {
				m.block(r.Context())
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(m.release)
		m.Close()
	})
	return m
}

func (m *slowMCP) block(ctx context.Context) {
	select {
	case <-m.release:
	case <-ctx.Done():
		m.ended.Add(1)
	}
}

func slowPool(t *testing.T, url string, o mcppool.Options) (*mcppool.Pool, string) {
	db := testdb.New(t)
	id := addConnection(t, db, "slowsrv", url, "none", `{}`)
	o.DB, o.Credentials = db, &creds{tokens: map[uuid.UUID][]string{}}
	p := mcppool.New(o)
	t.Cleanup(p.Close)
	return p, id
}

// A tools/call the server never answers ends at the pool's call timeout with
// a message naming that timeout, and the next call on the same session works.
func TestCallTimeoutEndsTheCallAndKeepsTheSession(t *testing.T) {
	ctx := context.Background()
	srv := newSlowMCP(t)
	p, id := slowPool(t, srv.URL, mcppool.Options{CallTimeout: 200 * time.Millisecond})

	if out, err := p.Call(ctx, id, "quick", nil); err != nil || out != "quick answer" {
		t.Fatalf("first call: %q %v", out, err)
	}
	_, err := p.Call(ctx, id, "slow", nil)
	if err == nil || err.Error() != "slowsrv: tools/call did not answer within 200ms" {
		t.Fatalf("slow call: %v", err)
	}
	if out, err := p.Call(ctx, id, "quick", nil); err != nil || out != "quick answer" {
		t.Fatalf("the call after the slow one: %q %v", out, err)
	}
	if n := srv.inits.Load(); n != 1 {
		t.Fatalf("the session was opened %d times; the slow call should leave it usable", n)
	}
}

// A tools/list the server never answers ends at the pool's list timeout, and
// the session still lists and calls afterwards.
func TestListTimeoutEndsTheListingAndKeepsTheSession(t *testing.T) {
	ctx := context.Background()
	srv := newSlowMCP(t)
	p, id := slowPool(t, srv.URL, mcppool.Options{ListTimeout: 200 * time.Millisecond})

	if out, err := p.Call(ctx, id, "quick", nil); err != nil || out != "quick answer" {
		t.Fatalf("first call: %q %v", out, err)
	}
	srv.stallList.Store(true)
	_, err := p.List(ctx, id)
	if err == nil || err.Error() != "slowsrv: tools/list did not answer within 200ms" {
		t.Fatalf("slow listing: %v", err)
	}
	srv.stallList.Store(false)
	tools, err := p.List(ctx, id)
	if err != nil || len(tools) != 2 {
		t.Fatalf("the listing after the slow one: %d tools, %v", len(tools), err)
	}
	if out, err := p.Call(ctx, id, "quick", nil); err != nil || out != "quick answer" {
		t.Fatalf("a call after the slow listing: %q %v", out, err)
	}
	if n := srv.inits.Load(); n != 1 {
		t.Fatalf("the session was opened %d times; the slow listing should leave it usable", n)
	}
}

func TestTimeoutErrorSaysSeconds(t *testing.T) {
	e := &mcppool.TimeoutError{Server: "notion", Op: "tools/call", After: mcppool.CallTimeout}
	if e.Error() != "notion: tools/call did not answer within 90s" {
		t.Fatal(e.Error())
	}
}

// The pool's timeout is told apart from the caller's own deadline: a caller
// that gives up first gets its own context error, not the pool's message.
func TestCallerDeadlineIsNotThePoolTimeout(t *testing.T) {
	srv := newSlowMCP(t)
	p, id := slowPool(t, srv.URL, mcppool.Options{})
	if _, err := p.Call(context.Background(), id, "quick", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, id, "slow", nil)
	if err == nil || strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("caller's deadline: %v", err)
	}
}

// A catalog row's own call timeout bounds its calls instead of the pool's:
// here a second, where the pool's would be 90 s. The first call, made with
// no session yet, and a later one on the open session both take it.
func TestARowsOwnCallTimeoutBoundsItsCalls(t *testing.T) {
	ctx := context.Background()
	srv := newSlowMCP(t)
	db := testdb.New(t)
	id := addConnection(t, db, "slowsrv", srv.URL, "none", `{"call_timeout_seconds": 1}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	for _, when := range []string{"without a session", "on the open session"} {
		_, err := p.Call(ctx, id, "slow", nil)
		if err == nil || err.Error() != "slowsrv: tools/call did not answer within 1s" {
			t.Fatalf("%s: %v", when, err)
		}
	}
}
