package mcppool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/tools"
)

// A tool that lists an outputSchema promises structuredContent that follows
// it; the spec asks clients to check. The listed schema is stored with the
// listing (mcp_tools.output_schema) and read only for a result that carries
// structuredContent, by primary key; the pool then keeps it with the login's
// row until a new listing of the login is announced (docs/adr/0627), and its
// compiled form per process.
// See docs/adr/0621.

// maxStructuredProblem caps the validation message the model reads.
const maxStructuredProblem = 1 << 10

// maxCompiledOutputs bounds the compiled output schemas kept in memory.
const maxCompiledOutputs = 512

// outputSchemas holds compiled output schemas by their text; a nil value is
// one that does not compile.
type outputSchemas struct {
	mu sync.Mutex
	m  map[string]*tools.Schema
}

func (c *outputSchemas) compile(raw json.RawMessage) (*tools.Schema, error) {
	key := string(raw)
	c.mu.Lock()
	s, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		if s == nil {
			return nil, errors.New("the listed output schema does not compile")
		}
		return s, nil
	}
	s, err := tools.CompileSchema(raw)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCompiledOutputs {
		c.m = map[string]*tools.Schema{}
	}
	c.m[key] = s
	c.mu.Unlock()
	return s, err
}

// checkStructured validates a result's structuredContent against the tool's
// listed output schema (kept in memory with the login's row, logins.go). It
// returns "" when there is nothing to check or the
// content conforms, else the message the model reads in place of the whole
// result. A schema that cannot be read or compiled checks nothing (logged):
// the server's answer is not lost to the platform's own failure.
func (p *Pool) checkStructured(ctx context.Context, connectionID, remoteName string, r *mcp.CallToolResult) string {
	if r == nil || r.IsError || r.StructuredContent == nil || p.o.DB == nil {
		return ""
	}
	raw, err := p.outputSchema(ctx, connectionID, remoteName)
	if err != nil {
		p.log.Warn("mcppool: output schema not read; structured content not checked", "connection", connectionID, "remote_tool", remoteName, "err", oneLine(err))
		return ""
	}
	if len(raw) == 0 {
		return ""
	}
	schema, err := p.outputs.compile(raw)
	if err != nil {
		p.log.Warn("mcppool: output schema does not compile; structured content not checked", "connection", connectionID, "remote_tool", remoteName, "err", oneLine(err))
		return ""
	}
	doc, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return "the tool's structured result is not JSON"
	}
	problems := schema.Check(doc)
	if len(problems) == 0 {
		return ""
	}
	msg := "the tool's structured result does not match its output schema, so it was not kept: " + strings.Join(problems, "; ")
	if len(msg) > maxStructuredProblem {
		msg = cutUTF8(msg, maxStructuredProblem) + " …"
	}
	return msg
}

// structuredOnce gives the model a result's structuredContent once, as
// compact JSON: a text part that holds the same JSON (however laid out) is
// replaced by the compact form; with no text part at all the compact JSON is
// added, unless it repeats the base64 data of a non-text part (ADR 0617 keeps
// that out of the text). A text part that says something else is left
// alone: the server wrote it for the model.
func structuredOnce(parts []tools.Part, r *mcp.CallToolResult) []tools.Part {
	if r.StructuredContent == nil {
		return parts
	}
	compact, err := compactJSON(r.StructuredContent)
	if err != nil {
		return parts
	}
	var want any
	_ = json.Unmarshal(compact, &want)
	hasText := false
	for i, p := range parts {
		if p.Image != nil {
			continue
		}
		hasText = true
		t := strings.TrimSpace(p.Text)
		if t == "" || (t[0] != '{' && t[0] != '[') {
			continue
		}
		var got any
		if json.Unmarshal([]byte(t), &got) == nil && reflect.DeepEqual(got, want) {
			parts[i].Text = string(compact)
			return parts
		}
	}
	if hasText || repeatsData(string(compact), r.Content) {
		return parts
	}
	return append(parts, tools.Part{Text: string(compact)})
}

// compactJSON is v as JSON without spaces, "<", ">" and "&" left as they
// are (the model reads them; json.Marshal would escape them).
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// repeatsData reports whether s holds the base64 data of a non-text part.
func repeatsData(s string, content []mcp.Content) bool {
	for _, c := range content {
		var data string
		switch v := c.(type) {
		case mcp.ImageContent:
			data = v.Data
		case *mcp.ImageContent:
			data = v.Data
		case mcp.AudioContent:
			data = v.Data
		case *mcp.AudioContent:
			data = v.Data
		case mcp.EmbeddedResource:
			data = blobOf(v.Resource)
		case *mcp.EmbeddedResource:
			data = blobOf(v.Resource)
		}
		if len(data) >= 16 && strings.Contains(s, data) {
			return true
		}
	}
	return false
}

func blobOf(r mcp.ResourceContents) string {
	switch v := r.(type) {
	case mcp.BlobResourceContents:
		return v.Blob
	case *mcp.BlobResourceContents:
		return v.Blob
	}
	return ""
}

// cutUTF8 is s cut to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// outputSchema is a tool's listed output schema (nil: none, or not listed).
func (p *Pool) outputSchema(ctx context.Context, connectionID, remoteName string) ([]byte, error) {
	if raw, ok := p.logins.output(connectionID, remoteName); ok {
		return raw, nil
	}
	gen := p.logins.generation()
	var raw []byte
	err := p.o.DB.QueryRow(ctx, `SELECT output_schema FROM mcp_tools WHERE connection_id = $1 AND remote_name = $2`,
		connectionID, remoteName).Scan(&raw)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	p.logins.putOutput(connectionID, remoteName, raw, gen)
	return raw, nil
}
