package mcppool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// shopMCP is a real MCP peer whose "order" tool asks for the number of
// copies through a form (an input_required result, which mcp-go's server
// turns into elicitation/create for a client of the handshake era) and
// answers with what it was told.
func shopMCP() *server.MCPServer {
	s := newMCP()
	addOrderTool(s)
	s.AddTool(mcp.NewTool("sign_in"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, "login"); r != nil {
			return mcp.NewToolResultText("link " + string(r.Action)), nil
		}
		return server.NewInputRequestBuilder("").Elicit("login", mcp.ElicitationParams{Mode: mcp.ElicitationModeURL,
			Message: "Sign in to the shop", URL: "https://shop.example/login?state=1", ElicitationID: "e-1"}).ToolResult(), nil
	})
	return s
}

func addOrderTool(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("order"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, "copies"); r != nil {
			b, _ := json.Marshal(r.Content)
			return mcp.NewToolResultText(string(r.Action) + " " + string(b)), nil
		}
		return server.NewInputRequestBuilder("").Elicit("copies", mcp.ElicitationParams{Message: "How many copies?",
			RequestedSchema: map[string]any{"type": "object", "required": []string{"copies"},
				"properties": map[string]any{"copies": map[string]any{"type": "integer", "minimum": 1, "maximum": 10}}}}).ToolResult(), nil
	})
}

// runPlace inserts an organisation, guild, agent and run to ask for.
func runPlace(t *testing.T, db *pgxpool.Pool) inputs.Request {
	t.Helper()
	ctx := context.Background()
	var r inputs.Request
	q := func(sql string, dst *string, args ...any) {
		t.Helper()
		if err := db.QueryRow(ctx, sql, args...).Scan(dst); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	slug := "o" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	q(`INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id`, &r.OrganisationID, slug)
	q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, &r.GuildID, r.OrganisationID)
	q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'buyer') RETURNING id`, &r.AgentID, r.GuildID)
	q(`INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 5, 5) RETURNING id`, &r.RunID, r.AgentID, r.GuildID, r.OrganisationID)
	r.Seq, r.Tool, r.Server = 1, "shop_order", "shop"
	return r
}

// asking is a call's asker that reports each request it records.
func asking(db *pgxpool.Pool, at inputs.Request) (inputs.CallAsker, <-chan inputs.Request) {
	asked := make(chan inputs.Request, 4)
	return inputs.CallAsker{DB: db, At: at, Waiting: func(_ context.Context, r inputs.Request) error {
		asked <- r
		return nil
	}}, asked
}

func answer(t *testing.T, db *pgxpool.Pool, asked <-chan inputs.Request, a inputs.Answer) inputs.Request {
	t.Helper()
	var r inputs.Request
	select {
	case r = <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the server's form did not reach the inbox")
	}
	if _, err := inputs.Respond(context.Background(), db, r.ID, nil, inputs.Reply{Answer: a, UserName: "Ann"}); err != nil {
		t.Fatalf("answer: %v", err)
	}
	return r
}

// A row that sends forms to a person: the call waits, the form reaches the
// inbox with the server's schema, and the operator's answer goes back to the
// server, in both protocol eras (an input_required result answered on the
// next attempt; an elicitation/create request answered on its stream).
func TestAFormGoesToAPersonAndTheAnswerToTheServer(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(http.Handler) http.Handler
	}{{"stateless", func(h http.Handler) http.Handler { return h }}, {"handshake", handshakeOnly}} {
		t.Run(c.name, func(t *testing.T) {
			db := testdb.New(t)
			srv := httptest.NewServer(c.wrap(server.NewStreamableHTTPServer(shopMCP())))
			t.Cleanup(srv.Close)
			id := addConnection(t, db, "shop", srv.URL, "none", `{"elicitation":"person"}`)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
			t.Cleanup(p.Close)
			asker, asked := asking(db, runPlace(t, db))
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := p.Call(inputs.WithAsker(context.Background(), asker), id, "order", nil)
				done <- result{out, err}
			}()
			var r inputs.Request
			select {
			case res := <-done:
				t.Fatalf("the call ended without asking: %q, %v", res.out, res.err)
			case r = <-peek(asked):
			}
			r = answer(t, db, again(r), inputs.Answer{Action: inputs.ActionAccept, Content: map[string]any{"copies": 3}})
			if r.Mode != inputs.ModeForm || r.Message != "How many copies?" || !strings.Contains(string(r.Schema), `"maximum": 10`) && !strings.Contains(string(r.Schema), `"maximum":10`) {
				t.Fatalf("the inbox shows %+v", r)
			}
			res := <-done
			if res.err != nil || res.out != `accept {"copies":3}` {
				t.Fatalf("call = %q, %v", res.out, res.err)
			}
			if content, err := inputs.Take(context.Background(), db, r.ID); err != nil || content != nil {
				t.Fatalf("the answer is still stored after it was sent: %v, %v", content, err)
			}
		})
	}
}

// URL mode: the operator sees the link; accepting tells the server the
// person went there.
func TestALinkGoesToAPerson(t *testing.T) {
	db := testdb.New(t)
	srv := httptest.NewServer(server.NewStreamableHTTPServer(shopMCP()))
	t.Cleanup(srv.Close)
	id := addConnection(t, db, "shop", srv.URL, "none", `{"elicitation":"person"}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	asker, asked := asking(db, runPlace(t, db))
	done := make(chan string, 1)
	go func() {
		out, err := p.Call(inputs.WithAsker(context.Background(), asker), id, "sign_in", nil)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	r := answer(t, db, asked, inputs.Answer{Action: inputs.ActionAccept})
	if r.Mode != inputs.ModeURL || r.URL != "https://shop.example/login?state=1" {
		t.Fatalf("the inbox shows %+v", r)
	}
	if out := <-done; out != "link accept" {
		t.Fatalf("call = %q", out)
	}
}

// Nobody answers within the row's bound: the server is told "decline" and
// the request reads expired. A call that cannot ask (no asker: a Test call)
// declines at once.
func TestAFormNobodyAnswersIsDeclined(t *testing.T) {
	db := testdb.New(t)
	srv := httptest.NewServer(server.NewStreamableHTTPServer(shopMCP()))
	t.Cleanup(srv.Close)
	id := addConnection(t, db, "shop", srv.URL, "none", `{"elicitation":"person","input_wait_seconds":1}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	at := runPlace(t, db)
	asker, asked := asking(db, at)
	out, err := p.Call(inputs.WithAsker(context.Background(), asker), id, "order", nil)
	if err != nil || out != "decline null" {
		t.Fatalf("call = %q, %v", out, err)
	}
	r := <-asked
	if got, err := inputs.Get(context.Background(), db, r.ID, nil); err != nil || got.State != inputs.StateExpired {
		t.Fatalf("request = %+v, %v", got, err)
	}
	if out, err := p.Call(context.Background(), id, "order", nil); err != nil || out != "decline null" {
		t.Fatalf("a call nobody can answer = %q, %v", out, err)
	}
}

func peek(c <-chan inputs.Request) <-chan inputs.Request { return c }

func again(r inputs.Request) <-chan inputs.Request {
	c := make(chan inputs.Request, 1)
	c <- r
	return c
}

// A server the platform runs over stdio asks the same way: the form reaches
// the inbox and the answer the server.
func TestAStdioServersFormGoesToAPerson(t *testing.T) {
	db := testdb.New(t)
	cfg, _ := json.Marshal(map[string]any{"command": peerCommand(t), "args": []string{stdioPeerArg}, "elicitation": "person"})
	id := addServerConnection(t, db, "localshop", "stdio", "", "none", string(cfg))
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	asker, asked := asking(db, runPlace(t, db))
	done := make(chan string, 1)
	go func() {
		out, err := p.Call(inputs.WithAsker(context.Background(), asker), id, "order", nil)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	answer(t, db, asked, inputs.Answer{Action: inputs.ActionAccept, Content: map[string]any{"copies": 2}})
	if out := <-done; out != `accept {"copies":2}` {
		t.Fatalf("call = %q", out)
	}
}
