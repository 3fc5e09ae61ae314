package mcppool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// progressed collects the progress a call reports; first is closed when
// the first step arrives.
type progressed struct {
	mu    sync.Mutex
	steps [][2]float64
	once  sync.Once
	first chan struct{}
}

func newProgressed() *progressed { return &progressed{first: make(chan struct{})} }

func (p *progressed) fn(progress, total float64) {
	p.mu.Lock()
	p.steps = append(p.steps, [2]float64{progress, total})
	p.mu.Unlock()
	if p.first != nil {
		p.once.Do(func() { close(p.first) })
	}
}

func (p *progressed) got() [][2]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][2]float64(nil), p.steps...)
}

// slowSteps is a tool reporting three steps on the token it was given. It
// finishes once the caller has seen a step (received, or the request
// ended): a handshake-era server may send them on the GET stream, which is
// not ordered with the call's answer.
func slowSteps(s *server.MCPServer, seen func() <-chan struct{}) {
	s.AddTool(mcp.NewTool("steps"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
			return mcp.NewToolResultText("no token"), nil
		}
		for i := 1; i <= 3; i++ {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
				map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 3, "message": "step"})
		}
		select {
		case <-seen():
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done"), nil
	})
}

func TestProgressReachesTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func(*server.MCPServer) http.Handler
	}{
		{"stateless", func(s *server.MCPServer) http.Handler { return server.NewStreamableHTTPServer(s) }},
		{"handshake", func(s *server.MCPServer) http.Handler {
			return handshakeOnly(server.NewStreamableHTTPServer(s, server.WithStateful(true)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server.NewMCPServer("steps", "1.0.0", server.WithToolCapabilities(false))
			pr := newProgressed()
			slowSteps(s, func() <-chan struct{} { return pr.first })
			srv := httptest.NewServer(tc.h(s))
			t.Cleanup(srv.Close)
			db := testdb.New(t)
			id := addConnection(t, db, "steps", srv.URL, "none", `{}`)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
			t.Cleanup(p.Close)

			if out, err := p.Call(context.Background(), id, "steps", nil); err != nil || out != "no token" {
				t.Fatalf("a call without a listener must ask for no progress: %q %v", out, err)
			}
			out, err := p.Call(mcppool.WithProgress(context.Background(), pr.fn), id, "steps", nil)
			if err != nil || out != "done" {
				t.Fatalf("call = %q, %v", out, err)
			}
			// mcp-go's server can lose a notification sent just before its
			// handler returns (its forwarder takes it off the channel after
			// the request is done), so not every step is guaranteed; those
			// that arrive must be this call's, in order. server-everything
			// (everything_test.go) delivers all of its steps.
			got := pr.got()
			if len(got) == 0 {
				t.Fatal("no progress reached the caller")
			}
			for i, st := range got {
				if st[1] != 3 || st[0] < 1 || st[0] > 3 || (i > 0 && st[0] <= got[i-1][0]) {
					t.Fatalf("progress %v: not the tool's steps in order", got)
				}
			}
		})
	}
}
