package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// A 2020-12 schema with what mcp-go's decoded schema has no field for.
const richSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"$defs":{"address":{"$anchor":"addr","type":"object","properties":{"city":{"type":"string"}}}},
"properties":{"kind":{"enum":["home","work"]},"where":{"$ref":"#/$defs/address"}},
"required":["kind"],"additionalProperties":false,
"allOf":[{"minProperties":1}],"anyOf":[{"required":["kind"]}],
"if":{"properties":{"kind":{"const":"work"}}},"then":{"required":["where"]},"else":{}}`

func TestListedSchemaIsStoredAsSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  func(*server.MCPServer) *httptest.Server
	}{
		{"stateless", func(s *server.MCPServer) *httptest.Server {
			return httptest.NewServer(server.NewStreamableHTTPServer(s))
		}},
		{"handshake", func(s *server.MCPServer) *httptest.Server {
			return httptest.NewServer(handshakeOnly(server.NewStreamableHTTPServer(s, server.WithStateful(true))))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server.NewMCPServer("rich", "1.0.0", server.WithToolCapabilities(false))
			s.AddTool(mcp.NewToolWithRawSchema("place", "Place something", json.RawMessage(richSchema)),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("ok"), nil
				})
			srv := tc.srv(s)
			t.Cleanup(srv.Close)
			db := testdb.New(t)
			id := addConnection(t, db, "rich", srv.URL, "none", `{}`)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
			t.Cleanup(p.Close)
			if _, err := p.Sync(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			stored, err := mcppool.Stored(context.Background(), db, id)
			if err != nil || len(stored) != 1 {
				t.Fatalf("stored %v, %v", stored, err)
			}
			if !jsonEqual(t, stored[0].Schema, []byte(richSchema)) {
				t.Fatalf("the stored schema is not the one listed:\n%s", stored[0].Schema)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}
