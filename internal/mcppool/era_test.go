package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// wire records the JSON-RPC requests an MCP server receives: method, the
// Mcp-Method and Mcp-Name headers, and the protocol version in _meta.
type wire struct {
	mu   sync.Mutex
	seen []wireRequest
}

type wireRequest struct {
	Method, HeaderMethod, HeaderName, MetaVersion string
}

func (w *wire) wrap(h http.Handler) http.Handler {
	return onPost(h, func(r *http.Request, body []byte) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta struct {
					Version string `json:"io.modelcontextprotocol/protocolVersion"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		w.mu.Lock()
		w.seen = append(w.seen, wireRequest{m.Method, r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name"), m.Params.Meta.Version})
		w.mu.Unlock()
	})
}

// onPost hands every POST's body to see before h serves the request.
func onPost(h http.Handler, see func(r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			see(r, body)
		}
		h.ServeHTTP(rw, r)
	})
}

func (w *wire) count(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.seen {
		if r.Method == method {
			n++
		}
	}
	return n
}

func (w *wire) last(method string) wireRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.seen) - 1; i >= 0; i-- {
		if w.seen[i].Method == method {
			return w.seen[i]
		}
	}
	return wireRequest{}
}

func (w *wire) reset() {
	w.mu.Lock()
	w.seen = nil
	w.mu.Unlock()
}

// callEcho opens a new login on the server row slug and calls its echo tool.
func callEcho(t *testing.T, p *mcppool.Pool, id string) {
	t.Helper()
	out, err := p.Call(context.Background(), id, "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || out != "echo: hi" {
		t.Fatalf("call = %q, %v", out, err)
	}
}

func TestStatelessServerIsSpokenAtItsRevision(t *testing.T) {
	db := testdb.New(t)
	w := &wire{}
	srv := httptest.NewServer(w.wrap(server.NewStreamableHTTPServer(newMCP())))
	t.Cleanup(srv.Close)
	first := addConnection(t, db, "modern", srv.URL, "none", `{}`)
	second := addConnection(t, db, "modern", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)

	callEcho(t, p, first)
	if n := w.count("initialize"); n != 0 {
		t.Fatalf("a 2026-07-28 server got %d initialize requests", n)
	}
	call := w.last("tools/call")
	if call.HeaderMethod != "tools/call" || call.HeaderName != "echo" || call.MetaVersion != "2026-07-28" {
		t.Fatalf("tools/call went out as %+v, want the stateless wire's headers and _meta", call)
	}
	// The first session checked the discover answer; a later one trusts
	// what was learnt and sends one probe only.
	if n := w.count("server/discover"); n != 2 {
		t.Fatalf("first session: %d server/discover, want the probe and its check", n)
	}
	w.reset()
	callEcho(t, p, second)
	if n := w.count("server/discover"); n != 1 {
		t.Fatalf("second session: %d server/discover, want 1", n)
	}
}

func TestServerFakingDiscoverGetsTheHandshake(t *testing.T) {
	db := testdb.New(t)
	w := &wire{}
	legacy := server.NewStreamableHTTPServer(newMCP(), server.WithStateful(true))
	// Like some servers of the handshake era: every unknown method "succeeds"
	// with an empty result.
	fake := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "server/discover" {
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
			return
		}
		legacy.ServeHTTP(rw, r)
	})
	srv := httptest.NewServer(w.wrap(fake))
	t.Cleanup(srv.Close)
	first := addConnection(t, db, "old", srv.URL, "none", `{}`)
	second := addConnection(t, db, "old", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)

	callEcho(t, p, first)
	if n := w.count("initialize"); n != 1 {
		t.Fatalf("%d initialize requests, want the handshake once", n)
	}
	if v := w.last("tools/call").MetaVersion; v != "" {
		t.Fatalf("tools/call carried the stateless _meta (%q) to a handshake server", v)
	}
	// Remembered: the next session of the same server goes straight to the
	// handshake.
	w.reset()
	callEcho(t, p, second)
	if n := w.count("server/discover"); n != 0 {
		t.Fatalf("second session sent %d server/discover to a server known to need the handshake", n)
	}
	if n := w.count("initialize"); n != 1 {
		t.Fatalf("second session: %d initialize, want 1", n)
	}
}

// statelessOnly answers initialize the way a 2026-07-28-only server does
// (400: the handshake is gone) and passes everything else to h.
func statelessOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A stateless server refusing the probe with 401 is a refused login, not a
// failed handshake: the pool refreshes once and the call goes through.
func TestRefusedProbeIsARefusedLogin(t *testing.T) {
	db := testdb.New(t)
	rs := newStatelessRemote(t, "Authorization")
	inner := rs.Config.Handler
	rs.Config.Handler = statelessOnly(inner)
	rs.allow("Bearer good")
	id := addConnection(t, db, "modern", rs.URL, "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"stale", "good"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	callEcho(t, p, id)
	if cr.refreshes != 1 {
		t.Fatalf("%d refreshes, want the one a 401 earns", cr.refreshes)
	}
}

// A server refusing the version it lists as supported (a fleet mid-upgrade)
// gets the probe again, never the handshake.
func TestProbeRefusingItsOwnVersionIsSentAgain(t *testing.T) {
	db := testdb.New(t)
	w := &wire{}
	h := server.NewStreamableHTTPServer(newMCP())
	var refused atomic.Bool
	flaky := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" && refused.CompareAndSwap(false, true) {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusBadRequest)
			_, _ = rw.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`))
			return
		}
		h.ServeHTTP(rw, r)
	})
	srv := httptest.NewServer(w.wrap(statelessOnly(flaky)))
	t.Cleanup(srv.Close)
	id := addConnection(t, db, "modern", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	callEcho(t, p, id)
	if n := w.count("initialize"); n != 0 {
		t.Fatalf("%d initialize requests after a refused probe", n)
	}
}

// A tool asking for input (SEP-2322) gets a decline at once: a run has
// nobody to ask. The server sees its request state echoed and finishes.
func TestInputRequestsAreDeclined(t *testing.T) {
	db := testdb.New(t)
	s := newMCP()
	var answer atomic.Pointer[string]
	s.AddTool(mcp.NewTool("delete_all"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, "confirm"); r != nil {
			a := string(r.Action) + " " + req.Params.RequestState
			answer.Store(&a)
			return mcp.NewToolResultText("not deleted: " + string(r.Action)), nil
		}
		return server.NewInputRequestBuilder("state-7").Elicit("confirm", mcp.ElicitationParams{
			Message:         "Delete everything?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
		}).ToolResult(), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	id := addConnection(t, db, "modern", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	out, err := p.Call(context.Background(), id, "delete_all", nil)
	if err != nil || out != "not deleted: decline" {
		t.Fatalf("call = %q, %v", out, err)
	}
	if a := answer.Load(); a == nil || *a != "decline state-7" {
		t.Fatalf("the server saw %v, want the decline with its state echoed", a)
	}
}

// Where the operator said so (config.elicitation "defaults"), a form whose
// fields all have defaults is answered with them; one with a required field
// without a default is still declined.
func TestFormsAreAnsweredWithTheirDefaultsWhereTheOperatorSaysSo(t *testing.T) {
	db := testdb.New(t)
	s := newMCP()
	var answer atomic.Pointer[string]
	form := func(name string, schema map[string]any) {
		s.AddTool(mcp.NewTool(name), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r := server.ElicitationResponse(req.Params.InputResponses, "prefs"); r != nil {
				b, _ := json.Marshal(r.Content)
				a := string(r.Action) + " " + string(b)
				answer.Store(&a)
				return mcp.NewToolResultText(string(r.Action)), nil
			}
			return server.NewInputRequestBuilder("").Elicit("prefs", mcp.ElicitationParams{Message: "Preferences?", RequestedSchema: schema}).ToolResult(), nil
		})
	}
	form("prefs", map[string]any{"type": "object", "required": []string{"region"}, "properties": map[string]any{
		"region": map[string]any{"type": "string", "default": "eu-west"}, "verbose": map[string]any{"type": "boolean", "default": false}}})
	form("name", map[string]any{"type": "object", "required": []string{"name"}, "properties": map[string]any{
		"name": map[string]any{"type": "string"}}})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	id := addConnection(t, db, "forms", srv.URL, "none", `{"elicitation":"defaults"}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	if out, err := p.Call(context.Background(), id, "prefs", nil); err != nil || out != "accept" {
		t.Fatalf("prefs = %q, %v", out, err)
	}
	if a := answer.Load(); a == nil || *a != `accept {"region":"eu-west","verbose":false}` {
		t.Fatalf("the server saw %v, want the defaults", a)
	}
	if out, err := p.Call(context.Background(), id, "name", nil); err != nil || out != "decline" {
		t.Fatalf("a form nobody can fill = %q, %v; want declined", out, err)
	}
}

// A stateless server that answers its first server/discover later than
// mcp-go's own 5 s probe bound (a loaded machine, a cold start) is still
// spoken to at its revision: the probe waits as long as a listing may, and
// no handshake is sent to a server that has none (issue 29, item 4).
func TestSlowDiscoverIsNotTakenForTheHandshakeEra(t *testing.T) {
	db := testdb.New(t)
	w := &wire{}
	modern := server.NewStreamableHTTPServer(newMCP())
	var delayed atomic.Bool
	srv := httptest.NewServer(w.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" && delayed.CompareAndSwap(false, true) {
			// The slow server itself: past mcp-go's default, well inside the listing bound.
			time.Sleep(6 * time.Second)
		}
		modern.ServeHTTP(rw, r)
	})))
	t.Cleanup(srv.Close)
	// The row's widest listing bound: only its lower edge (past mcp-go's
	// 5 s) is under test, so a loaded machine cannot reach the upper one.
	id := addConnection(t, db, "slow", srv.URL, "none", `{"list_timeout_seconds":120}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)

	callEcho(t, p, id)
	if n := w.count("initialize"); n != 0 {
		t.Fatalf("a slow 2026-07-28 server got %d initialize requests", n)
	}
}
