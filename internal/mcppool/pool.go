package mcppool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
)

// Timeouts of remote MCP requests.
const (
	CallTimeout = 90 * time.Second
	// MaxCallTimeout is the longest call timeout a catalog row may set
	// (config.call_timeout_seconds); the run's activity for a remote tool
	// outlives it.
	MaxCallTimeout = catalog.MaxCallTimeoutSeconds * time.Second
	ListTimeout    = 15 * time.Second
	// ListMaxAge is how old a stored listing may be before a run start lists again.
	ListMaxAge = 10 * time.Minute
)

// Credentials is what the pool needs of the connector engine's resolver.
type Credentials interface {
	Token(ctx context.Context, id uuid.UUID) (connectors.Credential, error)
	Refresh(ctx context.Context, id uuid.UUID) (connectors.Credential, error)
	// MarkRejected records a login the server refuses for good; the engine
	// is the only writer of credential state and tells every replica.
	MarkRejected(ctx context.Context, id uuid.UUID, code string) error
}

// SyncFunc persists a connection's listed tools.
type SyncFunc func(ctx context.Context, db store.DB, connectionID string, tools []Tool) error

// Options build a Pool.
type Options struct {
	DB          *pgxpool.Pool
	Credentials Credentials // the engine's *connectors.Resolver
	Log         *slog.Logger
	// Sync persists listings; nil uses StoreTools (grants.SyncListedTools).
	Sync SyncFunc
	// HTTPClient carries MCP requests; nil means one without a global timeout
	// (each request has its own deadline).
	HTTPClient *http.Client
	// CallTimeout and ListTimeout override the defaults (tests only;
	// production uses the constants).
	CallTimeout, ListTimeout time.Duration
	// SweepEvery overrides how often sessions of gone logins are closed
	// (default SweepEvery; negative: never).
	SweepEvery time.Duration
}

// Pool is the process's set of MCP sessions, keyed by connection id.
type Pool struct {
	o   Options
	log *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
	opening  map[string]*inflight // serialises the opening of one connection's session
	closed   bool
	stop     chan struct{} // closed by Close: ends the sweep
	hints    sync.Map      // connection id → time.Duration: the ttlMs of its last listing here (ttl.go)
	eras     eras          // server → the protocol era its last session settled on (era.go)
	outputs  outputSchemas // listed output schemas, compiled (structured.go)

	logins        loginCache // the logins' rows, kept while notifications flow (logins.go)
	stopListening context.CancelFunc
	listening     sync.WaitGroup
}

// New builds a pool; sessions open lazily on first use.
func New(o Options) *Pool {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Sync == nil {
		o.Sync = StoreTools
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	o.HTTPClient = connectors.GuardRedirects(o.HTTPClient)
	if o.CallTimeout == 0 {
		o.CallTimeout = CallTimeout
	}
	if o.ListTimeout == 0 {
		o.ListTimeout = ListTimeout
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = SweepEvery
	}
	p := &Pool{o: o, log: o.Log, sessions: map[string]*session{}, opening: map[string]*inflight{}, stop: make(chan struct{})}
	p.logins.reset(false)
	p.listenGone()
	p.listenLogins()
	if o.SweepEvery > 0 && o.DB != nil {
		go p.sweepLoop(o.SweepEvery)
	}
	return p
}

// Close ends every session.
func (p *Pool) Close() {
	p.mu.Lock()
	ss := p.sessions
	p.sessions = map[string]*session{}
	if !p.closed {
		close(p.stop)
	}
	p.closed = true
	p.mu.Unlock()
	for _, s := range ss {
		s.close()
	}
	if p.stopListening != nil {
		p.stopListening()
	}
	p.listening.Wait()
}

// Drop ends a connection's session, if any, and drops its kept row (after a
// reconnect or a delete).
func (p *Pool) Drop(connectionID string) {
	p.logins.drop(connectionID)
	p.mu.Lock()
	s := p.sessions[connectionID]
	delete(p.sessions, connectionID)
	p.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// Tool is one tool a connection listed.
type Tool struct {
	RemoteName  string // the server's name
	Name        string // what the model sees: {slug}_{name}
	Description string
	Schema      json.RawMessage // the input JSON Schema
	// OutputSchema is the JSON Schema the tool's structuredContent follows,
	// as listed; empty when the tool declares none.
	OutputSchema json.RawMessage
	UIResource   string // the ui:// page its _meta names (MCP Apps), or ""
}

// ModelName is the model-facing name of a remote tool, {slug}_{name} with
// dots turned into "_" (grants.ModelName, the one definition).
func ModelName(slug, remote string) string { return grants.ModelName(slug, remote) }

// Call runs tools/call on the connection's session and returns the result as
// text: CallParts with each image described and not kept.
func (p *Pool) Call(ctx context.Context, connectionID, remoteName string, args json.RawMessage) (string, error) {
	parts, err := p.CallParts(ctx, connectionID, remoteName, args)
	return tools.JoinParts(parts, nil), err
}

// CallParts runs tools/call on the connection's session and returns the
// result's pieces (see Parts). A result the server flags as an error comes
// back as "ERROR: …" text with a nil error, since it is the tool's answer;
// transport and credential failures are errors.
//
// The result and the error are redacted against every credential value the
// call injected, a token refreshed on the way included: a redaction set
// built before the call cannot know that one. An image holding one of those
// values is withheld.
func (p *Pool) CallParts(ctx context.Context, connectionID, remoteName string, args json.RawMessage) ([]tools.Part, error) {
	ctx, used := connectors.WithUsed(ctx)
	out, err := p.call(ctx, connectionID, remoteName, args)
	return used.Redact(out, err)
}

func (p *Pool) call(ctx context.Context, connectionID, remoteName string, args json.RawMessage) ([]tools.Part, error) {
	info, err := p.info(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	var arguments any
	if len(args) > 0 && string(args) != "null" {
		arguments = args
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = remoteName
	req.Params.Arguments = arguments
	ctx, span := telemetry.StartMCPRequest(ctx, "tools/call", remoteName)
	var out *mcp.CallToolResult
	var invalid string // why structuredContent was refused (structured.go)
	var task *wireTask // the server answered with a task (task.go)
	suspended := false
	ctx, raw := withRawResult(ctx, string(mcp.MethodToolsCall))
	err = p.do(ctx, connectionID, "tools/call", callTimeout(ctx, info, p.o.CallTimeout), func(ctx context.Context, s *session) error {
		traced(span, s)
		req.Params.Meta = withTrace(ctx, nil)
		if s.info.Transport == "stdio" {
			meta, err := p.stdioMeta(ctx, s)
			if err != nil {
				return err
			}
			req.Params.Meta = withTrace(ctx, meta)
		}
		if need, err := s.needsTask(ctx, remoteName); err != nil {
			return err
		} else if need {
			ttl := taskTTLMs
			req.Params.Task = &mcp.TaskParams{TTL: &ttl}
		}
		token, done := s.progress.watch(ctx)
		defer done()
		meta := req.Params.Meta
		req.Params.Meta = withProgressToken(meta, token)
		r, err := s.c.CallTool(ctx, req)
		if errors.Is(err, inputs.ErrSuspended) {
			suspended = true // the run waits for the person (inputhold.go)
			return nil
		}
		if t, ok := createdTask(raw.get()); ok {
			task = &t
			return nil
		}
		out = r
		if err == nil {
			if invalid = p.checkStructured(ctx, connectionID, remoteName, r); invalid == "" && !r.IsError {
				readLinks(ctx, s.c, meta, r)
			}
		}
		return err
	})
	if err != nil {
		span.End(errorType(err))
		return nil, err
	}
	if suspended {
		span.End("")
		return nil, nil
	}
	if task != nil {
		span.End("")
		if tools.HandOverTask(ctx, tools.RemoteTask{ConnectionID: connectionID, TaskID: task.TaskID, PollEvery: task.pollEvery()}) {
			return nil, nil // the run follows it (docs/adr/0625)
		}
		parts, err := p.waitTask(ctx, connectionID, *task, or(info.CallTimeout, p.o.CallTimeout))
		if err != nil {
			return nil, err
		}
		return parts, nil
	}
	if invalid != "" {
		span.End(telemetry.ErrorToolError)
		return []tools.Part{{Text: "ERROR: " + invalid}}, nil
	}
	parts := Parts(out)
	if out.IsError {
		span.End(telemetry.ErrorToolError)
		return []tools.Part{{Text: "ERROR: " + tools.JoinParts(parts, nil)}}, nil
	}
	span.End("")
	return parts, nil
}

// List runs tools/list on the connection's session (every page).
func (p *Pool) List(ctx context.Context, connectionID string) ([]Tool, error) {
	info, err := p.info(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	var tools []Tool
	var hint listHint
	ctx, span := telemetry.StartMCPRequest(ctx, "tools/list", "")
	err = p.do(ctx, connectionID, "tools/list", or(info.ListTimeout, p.o.ListTimeout), func(ctx context.Context, s *session) error {
		traced(span, s)
		t, h, err := listPages(ctx, s.c, s.info.Slug)
		tools, hint = t, h
		return err
	})
	span.End(errorType(err))
	if err == nil {
		p.noteHint(connectionID, hint)
	}
	return tools, err
}

// Sync lists the connection's tools and persists them.
func (p *Pool) Sync(ctx context.Context, connectionID string) ([]Tool, error) {
	tools, err := p.List(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	if err := p.o.Sync(ctx, p.o.DB, connectionID, tools); err != nil {
		return nil, err
	}
	return tools, nil
}

// SyncTools is Sync counting the tools (connections.Sessions).
func (p *Pool) SyncTools(ctx context.Context, connectionID string) (int, error) {
	tools, err := p.Sync(ctx, connectionID)
	return len(tools), err
}

// Refresh lists and persists the connection's tools when its stored listing
// is older than maxAge (or absent). A failed listing keeps the stored one; it
// is logged and returned so that the caller may ignore it.
func (p *Pool) Refresh(ctx context.Context, connectionID string, maxAge time.Duration) error {
	var newest *time.Time
	err := p.o.DB.QueryRow(ctx, `SELECT max(listed_at) FROM mcp_tools WHERE connection_id = $1`, connectionID).Scan(&newest)
	if err != nil {
		return store.Map(err)
	}
	if newest != nil && time.Since(*newest) < p.freshFor(connectionID, maxAge) {
		return nil
	}
	if _, err := p.Sync(ctx, connectionID); err != nil {
		p.log.Warn("mcppool: listing failed; keeping the stored tools", "connection", connectionID, "err", oneLine(err))
		return err
	}
	return nil
}

// do runs fn (the MCP request op) on the connection's session with the
// timeout, handling a 401 (one forced refresh, one retry) and a lost session
// (one re-initialisation). Reaching the timeout is a *TimeoutError; the
// caller's own deadline or cancellation stays the caller's error.
func (p *Pool) do(ctx context.Context, connectionID, op string, timeout time.Duration, fn func(context.Context, *session) error) error {
	ctx, _ = connectors.WithUsed(ctx) // the redirect guard drops what was injected
	reached := &TimeoutError{Op: op, After: timeout}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, reached)
	defer cancel()
	if err := p.present(ctx, connectionID); err != nil {
		return err
	}
	refreshed, reinit := false, false
	for {
		s, err := p.session(ctx, connectionID)
		if err == nil {
			err = fn(ctx, s)
		}
		switch {
		case err == nil:
			return nil
		case isUnauthorized(err) && !refreshed:
			refreshed = true
			if s == nil {
				s = &session{}
				if info, ierr := p.load(ctx, connectionID); ierr == nil {
					s.info = info
				}
			}
			if s.info.Auth != catalog.AuthOAuth {
				// A key cannot be refreshed: one more try on a fresh session
				// rules out a transient 401; a second one marks the login
				// disconnected, so that Connect can take a new key.
				p.forget(connectionID, s)
				continue
			}
			id, _ := uuid.Parse(connectionID)
			if _, rerr := p.o.Credentials.Refresh(ctx, id); rerr != nil {
				telemetry.TokenRefresh("error")
				return rerr
			}
			telemetry.TokenRefresh("ok")
			s.resetHeaders()
			p.log.Info("mcppool: token refreshed after a 401", "connection", connectionID)
		case isUnauthorized(err):
			return p.rejected(ctx, connectionID, s)
		case isSessionLost(err) && !reinit && ctx.Err() == nil:
			reinit = true
			p.forget(connectionID, s)
			p.log.Info("mcppool: session lost; re-initialising", "connection", connectionID)
		default:
			if context.Cause(ctx) == reached {
				reached.Server = label(slugOf(s))
				return reached
			}
			if s != nil {
				err = explain(s.info, err, false)
			}
			return p.scrub(context.WithoutCancel(ctx), connectionID, err)
		}
	}
}

func (p *Pool) scrub(ctx context.Context, connectionID string, err error) error {
	id, perr := uuid.Parse(connectionID)
	if perr != nil || p.o.Credentials == nil {
		return err
	}
	cred, cerr := p.o.Credentials.Token(ctx, id)
	if cerr != nil {
		return err
	}
	return connectors.Scrub(err, cred)
}

func slugOf(s *session) string {
	if s == nil {
		return ""
	}
	return s.info.Slug
}

func label(slug string) string {
	if slug == "" {
		return "the MCP server"
	}
	return slug
}

// rejected marks a login whose fresh token (or key, tried twice) the server
// still refuses.
func (p *Pool) rejected(ctx context.Context, connectionID string, s *session) error {
	p.forget(connectionID, s)
	id, _ := uuid.Parse(connectionID)
	if err := p.o.Credentials.MarkRejected(ctx, id, "token_rejected"); err != nil {
		p.log.Error("mcppool: cannot mark the login reconnect_required", "connection", connectionID, "err", oneLine(err))
	}
	p.log.Warn("mcppool: server rejects a fresh token; login needs reconnecting", "connection", connectionID)
	return &connectors.ErrReconnectRequired{ConnectionID: id, Server: slugOf(s), Code: "token_rejected"}
}

func isUnauthorized(err error) bool {
	return errors.Is(err, transport.ErrAuthorizationRequired) || errors.Is(err, transport.ErrUnauthorized) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired)
}

func isSessionLost(err error) bool {
	// ErrTransportClosed: a stdio server process that exited.
	if errors.Is(err, transport.ErrSessionTerminated) || errors.Is(err, transport.ErrTransportClosed) {
		return true
	}
	msg := err.Error()
	// "Invalid session ID" (mcp-go) and "Could not find session" (the
	// Python SDK) answer a message posted to an SSE session a restarted
	// server no longer knows.
	for _, s := range []string{"transport has been closed", "connection has been closed", "transport not started", "client not initialized", "file already closed", "broken pipe", "EOF",
		"Invalid session ID", "Could not find session"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// withoutKey is err on one line with key cut out: a server may echo the
// request (its key included) in an error answer.
func withoutKey(err error, key string) string {
	if key == "" {
		return oneLine(err)
	}
	return strings.ReplaceAll(oneLine(err), key, "[REDACTED]")
}

func listAll(ctx context.Context, c *client.Client, slug string) ([]Tool, error) {
	tools, _, err := listPages(ctx, c, slug)
	return tools, err
}

// The most a listing may hold: a server past either is refused with a
// *PeerError, and the stored listing stays as it was.
const (
	MaxListedTools = grants.MaxListedTools
	MaxListPages   = 1000
)

// listPages lists every page, with the shortest ttlMs hint the pages gave.
func listPages(ctx context.Context, c *client.Client, slug string) ([]Tool, listHint, error) {
	var out []Tool
	var hint listHint
	ctx, raw := withRawPages(ctx)
	req := mcp.ListToolsRequest{}
	seen := map[mcp.Cursor]bool{}
	for page := 1; ; page++ {
		if page > MaxListPages {
			return nil, listHint{}, &PeerError{Server: slug, Reason: fmt.Sprintf("tools/list goes on past %d pages; the platform lists at most that many", MaxListPages)}
		}
		res, err := c.ListToolsByPage(ctx, req)
		if err != nil {
			return nil, listHint{}, err
		}
		hint = hint.with(res.TTL())
		if len(out)+len(res.Tools) > MaxListedTools {
			return nil, listHint{}, &PeerError{Server: slug, Reason: fmt.Sprintf("it lists more than %d tools; the platform keeps at most that many of one server", MaxListedTools)}
		}
		for _, t := range res.Tools {
			schema := t.RawInputSchema
			if len(schema) == 0 {
				schema, _ = json.Marshal(t.InputSchema)
			}
			out = append(out, Tool{RemoteName: t.Name, Name: ModelName(slug, t.Name), Description: t.Description, Schema: schema,
				UIResource: uiResourceOf(t.Meta)})
		}
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, listHint{}, &PeerError{Server: slug, Reason: "tools/list handed back a cursor it had already given: its pages go round in a loop"}
		}
		seen[res.NextCursor] = true
		req.Params.Cursor = res.NextCursor
	}
	kept := raw.schemas()
	for i := range out {
		s := kept[out[i].RemoteName]
		if s.Input != nil {
			out[i].Schema = s.Input
		}
		out[i].OutputSchema = s.Output
	}
	return out, hint, nil
}

// or is the row's own bound when it set one, else the pool's.
func or(own, def time.Duration) time.Duration {
	if own > 0 {
		return own
	}
	return def
}
