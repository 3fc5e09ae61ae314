package mcppool

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tool's input schema is stored as the server sent it: mcp-go decodes a
// listed schema into a struct that keeps only type, properties, required,
// $defs and additionalProperties, so $schema, allOf/anyOf, if/then/else,
// $anchor and the rest would be lost. The session's transport is wrapped to
// keep the raw result of each tools/list sent under withRawPages; only the
// copy the model sees is shaped later (internal/grants).

type rawPagesKey struct{}

// rawPages holds the raw results of the tools/list requests of one listing.
type rawPages struct {
	mu      sync.Mutex
	results []json.RawMessage
}

func withRawPages(ctx context.Context) (context.Context, *rawPages) {
	p := &rawPages{}
	return context.WithValue(ctx, rawPagesKey{}, p), p
}

func keepRaw(ctx context.Context, req transport.JSONRPCRequest, res *transport.JSONRPCResponse) {
	if res == nil || req.Method != string(mcp.MethodToolsList) || len(res.Result) == 0 {
		return
	}
	if p, ok := ctx.Value(rawPagesKey{}).(*rawPages); ok {
		p.mu.Lock()
		p.results = append(p.results, res.Result)
		p.mu.Unlock()
	}
	res.Result = decodable(res.Result)
}

// decodable is a tools/list page mcp-go can decode. Its schema struct
// refuses a schema that is not an object or whose "properties" or "type"
// has another JSON type than it expects ({"properties":5}), and with it
// the whole page. Such a tool's schemas are replaced in mcp-go's copy only:
// the raw page keeps them, the tool is stored with them and is never
// offered (its schema does not compile), and the other tools list.
func decodable(result json.RawMessage) json.RawMessage {
	var whole mcp.ListToolsResult
	if json.Unmarshal(result, &whole) == nil {
		return result
	}
	var page map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if json.Unmarshal(result, &page) != nil || json.Unmarshal(page["tools"], &tools) != nil {
		return result // not a page of tools at all: mcp-go says so
	}
	for _, t := range tools {
		for _, key := range []string{"inputSchema", "outputSchema"} {
			var s mcp.ToolInputSchema
			if raw, ok := t[key]; ok && json.Unmarshal(raw, &s) != nil {
				t[key] = json.RawMessage(`{"type":"object"}`)
			}
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return result
	}
	page["tools"] = b
	if b, err = json.Marshal(page); err != nil {
		return result
	}
	return b
}

// rawSchemas are one listed tool's schemas as the server sent them.
type rawSchemas struct {
	Input, Output json.RawMessage
}

// schemas is each listed tool's raw input and output schemas, by name.
func (p *rawPages) schemas() map[string]rawSchemas {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]rawSchemas{}
	for _, r := range p.results {
		var page struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(r, &page) != nil {
			continue
		}
		for _, t := range page.Tools {
			out[t.Name] = rawSchemas{Input: declared(t.InputSchema), Output: declared(t.OutputSchema)}
		}
	}
	return out
}

// declared is a schema the server sent, nil for none or JSON null.
func declared(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// The transports with the raw listing kept; every other method (and the
// optional interfaces mcp-go asserts) is the embedded transport's. person:
// the row sends its forms to a person, and a stateless server's
// input_required may be held durably (inputhold.go).
type (
	rawStreamable struct {
		*transport.StreamableHTTP
		person bool
	}
	rawSSE   struct{ *transport.SSE }
	rawStdio struct {
		*transport.Stdio
		person bool
	}
)

func (t *rawStreamable) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	res, err := sendHeld(ctx, t.person, req, t.StreamableHTTP.SendRequest)
	keepRaw(ctx, req, res)
	keepRawResult(ctx, req, res)
	return res, err
}

func (t *rawSSE) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	res, err := t.SSE.SendRequest(ctx, req)
	keepRaw(ctx, req, res)
	keepRawResult(ctx, req, res)
	return res, err
}

func (t *rawStdio) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	res, err := sendHeld(ctx, t.person, req, t.Stdio.SendRequest)
	keepRaw(ctx, req, res)
	keepRawResult(ctx, req, res)
	return res, err
}
