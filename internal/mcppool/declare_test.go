package mcppool_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// declaration is what one request told the server of its client: the
// initialize request's params on the handshake wire, the _meta of every
// request on the 2026-07-28 wire.
type declaration struct {
	Client      string
	Elicitation bool
	Extensions  []string // sorted
	// Apps is the MCP Apps extension's settings as declared.
	Apps json.RawMessage
}

// declaredTo records, per method, the declarations a server received.
type declaredTo struct {
	mu   sync.Mutex
	seen map[string][]declaration
}

func (d *declaredTo) wrap(h http.Handler) http.Handler {
	return onPost(h, func(_ *http.Request, body []byte) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Capabilities json.RawMessage            `json:"capabilities"`
				ClientInfo   json.RawMessage            `json:"clientInfo"`
				Meta         map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" {
			caps, info := m.Params.Meta[mcp.MetaKeyClientCapabilities], m.Params.Meta[mcp.MetaKeyClientInfo]
			if m.Method == "initialize" {
				caps, info = m.Params.Capabilities, m.Params.ClientInfo
			}
			d.note(m.Method, caps, info)
		}
	})
}

func (d *declaredTo) note(method string, caps, info json.RawMessage) {
	var c struct {
		Elicitation json.RawMessage            `json:"elicitation"`
		Extensions  map[string]json.RawMessage `json:"extensions"`
	}
	var i struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(caps, &c)
	_ = json.Unmarshal(info, &i)
	got := declaration{Client: i.Name, Elicitation: c.Elicitation != nil, Apps: c.Extensions[tools.AppExtension]}
	for name := range c.Extensions {
		got.Extensions = append(got.Extensions, name)
	}
	slices.Sort(got.Extensions)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[string][]declaration{}
	}
	d.seen[method] = append(d.seen[method], got)
}

// first and last are the first and the last declaration of method.
func (d *declaredTo) first(method string) declaration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.seen[method]; len(s) > 0 {
		return s[0]
	}
	return declaration{}
}

func (d *declaredTo) last(method string) declaration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.seen[method]; len(s) > 0 {
		return s[len(s)-1]
	}
	return declaration{}
}

// On the 2026-07-28 wire a session declares an extension only to a server
// that lists it among its capabilities; client info and elicitation go to
// every server. A server of the handshake era is told everything at
// initialize, as before.
func TestExtensionsAreDeclaredWhereAdvertised(t *testing.T) {
	db := testdb.New(t)
	apps := map[string]any{tools.AppExtension: map[string]any{"mimeTypes": []string{tools.AppMediaType}}}
	tasks := map[string]any{mcppool.TasksExtension: map[string]any{}}
	both := []string{tools.AppExtension, mcppool.TasksExtension}
	slices.Sort(both)
	for _, tc := range []struct {
		name     string
		handler  http.Handler
		method   string // whose declaration is checked
		declared []string
	}{
		{"stateless, both advertised", server.NewStreamableHTTPServer(newMCP(server.WithExtensions(advertisedExtensions))), "tools/call", both},
		{"stateless, Apps advertised", server.NewStreamableHTTPServer(newMCP(server.WithExtensions(apps))), "tools/call", []string{tools.AppExtension}},
		{"stateless, Tasks advertised", server.NewStreamableHTTPServer(newMCP(server.WithExtensions(tasks))), "tools/call", []string{mcppool.TasksExtension}},
		{"stateless, none advertised", server.NewStreamableHTTPServer(newMCP()), "tools/call", nil},
		{"handshake, none advertised", handshakeOnly(server.NewStreamableHTTPServer(newMCP(), server.WithStateful(true))), "initialize", both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &declaredTo{}
			srv := httptest.NewServer(d.wrap(tc.handler))
			t.Cleanup(srv.Close)
			// Closed before the server, which waits for the handshake
			// session's GET stream to end.
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
			t.Cleanup(p.Close)
			callEcho(t, p, addConnection(t, db, "declared-"+uuid.NewString()[:8], srv.URL, "none", `{}`))
			got := d.last(tc.method)
			if got.Client != "guilds" || !got.Elicitation {
				t.Fatalf("%s declared %+v, want the client info and elicitation", tc.method, got)
			}
			if !slices.Equal(got.Extensions, tc.declared) {
				t.Fatalf("%s declared the extensions %q, want %q", tc.method, got.Extensions, tc.declared)
			}
			if slices.Contains(tc.declared, tools.AppExtension) && !bytes.Contains(got.Apps, []byte(tools.AppMediaType)) {
				t.Fatalf("the Apps extension was declared as %s, want its media type", got.Apps)
			}
			if tc.method == "tools/call" {
				// The discover probe, sent before the answer is known, declares
				// every extension: a server may list one only to a client
				// that declares it.
				if probe := d.first("server/discover"); !slices.Equal(probe.Extensions, both) {
					t.Fatalf("the probe declared %q, want every extension", probe.Extensions)
				}
			}
		})
	}
}
