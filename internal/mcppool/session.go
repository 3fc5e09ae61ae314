package mcppool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// ServerInfo is what the pool needs of a connection's catalog row.
type ServerInfo struct {
	ServerID  string
	Slug      string
	Transport string // http, sse or stdio
	URL       string
	Auth      catalog.Auth
	Status    connstore.Status
	// Configured: a no-auth server whose login holds configured values (a
	// no-auth-with-config provider), sent as the provider injects them:
	// headers to an http or sse server, environment to a stdio one.
	Configured bool
	// Header and Scheme say how a token server wants its key: header
	// "X-API-KEY" with no scheme, or "Authorization" with "Bearer".
	Header, Scheme string
	// Command and Args start a stdio server the platform runs itself.
	Command string
	Args    []string
	// Kind is the catalog row's kind: the pool serves remote servers only
	// (an adapter's login is internal/adapters/host's).
	Kind catalog.Kind
	// AnswerDefaults: the operator lets the server's forms be answered with
	// their defaults (config.elicitation "defaults"); otherwise declined.
	AnswerDefaults bool
	// AskPerson: the server's forms go to a person (config.elicitation
	// "person"), who has InputWait to answer one.
	AskPerson bool
	InputWait time.Duration
	// ListTimeout and CallTimeout are the row's own bounds (0: the pool's).
	ListTimeout, CallTimeout time.Duration
}

func (p *Pool) load(ctx context.Context, connectionID string) (ServerInfo, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return ServerInfo{}, err
	}
	c, err := connstore.Get(ctx, p.o.DB, id)
	if err != nil {
		return ServerInfo{}, err
	}
	return p.infoOf(ctx, c), nil
}

// infoOf is the pool's view of a login's row.
func (p *Pool) infoOf(ctx context.Context, c connstore.Connection) ServerInfo {
	connectionID := c.ID.String()
	info := ServerInfo{ServerID: c.Server.ID.String(), Slug: c.Server.Slug, Kind: c.Server.Kind,
		Transport: c.Server.Transport, URL: c.Server.URL, Auth: c.Server.Auth, Status: c.Status}
	cfg := c.Server.Config
	if info.Auth == catalog.AuthNone {
		info.Configured = p.holdsLogin(ctx, connectionID)
	}
	sc, _ := catalog.ParseConfig(cfg) // lenient: what decoded is used, as before
	info.Header, info.Scheme, info.Command, info.Args = sc.Header, sc.Scheme, sc.Command, sc.Args
	info.AnswerDefaults = sc.Elicitation == catalog.ElicitDefaults
	info.AskPerson, info.InputWait = sc.Elicitation == catalog.ElicitPerson, sc.InputWait()
	info.ListTimeout = time.Duration(sc.ListTimeoutSeconds) * time.Second
	info.CallTimeout = time.Duration(sc.CallTimeoutSeconds) * time.Second
	return info
}

// holdsLogin reports whether the engine stores a login (configured values)
// for a connection; one it cannot read counts as held, so that using it
// surfaces the engine's typed error.
func (p *Pool) holdsLogin(ctx context.Context, connectionID string) bool {
	id, err := uuid.Parse(connectionID)
	if err != nil || p.o.Credentials == nil {
		return false
	}
	_, err = p.o.Credentials.Token(ctx, id)
	return !errors.Is(err, connectors.ErrNoCredential) && !errors.Is(err, connectors.ErrNotInUse) &&
		!errors.Is(err, connectors.ErrUnknownConnection)
}

// session is one connection's MCP client.
type session struct {
	id   uuid.UUID
	info ServerInfo
	c    *client.Client
	hdr  atomic.Pointer[headers]
	// lost is set when an SSE stream ends: replies travel on that stream, so
	// the session cannot answer any more and the next use opens a new one.
	lost atomic.Bool
	// progress routes the session's progress notifications to their calls.
	progress progressWatch
	// tasks are the tools its server runs only as tasks (augment.go).
	tasks taskTools
}

// headers caches the last header map built for a token, so the hot path
// builds no map while the token stays the same.
type headers struct {
	token string
	m     map[string]string
}

func (s *session) resetHeaders() {
	if s != nil {
		s.hdr.Store(nil)
	}
}

func (s *session) close() {
	if s != nil && s.c != nil {
		_ = s.c.Close()
	}
}

// Headers shapes a credential for a server: the catalog's header and scheme
// for token servers, else the engine's default injection (Authorization:
// Bearer). A DPoP-bound token is always sent with the DPoP scheme; its
// per-request proof is added by the session's client (dpopTransport).
func Headers(info ServerInfo, cred connectors.Credential) map[string]string {
	if cred.AccessToken == "" {
		return nil
	}
	if cred.DPoPBound() {
		return map[string]string{"Authorization": "DPoP " + cred.AccessToken}
	}
	if info.Header != "" {
		v := cred.AccessToken
		if info.Scheme != "" {
			v = info.Scheme + " " + v
		}
		return map[string]string{info.Header: v}
	}
	return connectors.DefaultInjection(cred).Headers
}

// headerFunc resolves the credential for every request. On a resolve error
// it sends no credential: the server answers 401 and the pool's retry path
// surfaces the resolver's typed error through Refresh.
func (p *Pool) headerFunc(s *session) func(context.Context) map[string]string {
	return func(ctx context.Context) map[string]string {
		if s.info.Auth == catalog.AuthNone {
			return nil // a configured login's values ride on its client (httpClient)
		}
		cred, err := p.o.Credentials.Token(ctx, s.id)
		if err != nil {
			return nil
		}
		// Noted for the call's redaction and its redirect guard, whatever
		// the credential source.
		connectors.UsedFrom(ctx).Add(cred.AccessToken)
		if h := s.hdr.Load(); h != nil && h.token == cred.AccessToken {
			return h.m
		}
		m := Headers(s.info, cred)
		s.hdr.Store(&headers{token: cred.AccessToken, m: m})
		return m
	}
}

// transportSource is the resolver's round tripper that sets a login's
// headers as its provider shapes them (connectors.Resolver.Transport).
type transportSource interface {
	Transport(base http.RoundTripper, id uuid.UUID) http.RoundTripper
}

// httpClient is the client of a session. A configured login's values ride on
// every request through the resolver's transport, resolved per request; the
// header function would miss the DELETE that ends a session. A resolve
// failure fails the request with the resolver's typed error.
//
// An OAuth session's requests also go through dpopTransport, which adds a
// DPoP proof to those sent with a DPoP-bound token.
func (p *Pool) httpClient(s *session) *http.Client {
	if s.info.Auth == catalog.AuthOAuth && p.o.Credentials != nil {
		c := *p.o.HTTPClient
		c.Transport = p.dpopTransport(s, c.Transport)
		return &c
	}
	ts, ok := p.o.Credentials.(transportSource)
	if !s.info.Configured || !ok {
		return p.o.HTTPClient
	}
	c := *p.o.HTTPClient
	c.Transport = ts.Transport(c.Transport, s.id)
	return &c
}

// inflight serialises the opening of one connection's session.
type inflight struct {
	mu sync.Mutex
}

// session returns the connection's open session, opening it when needed.
func (p *Pool) session(ctx context.Context, connectionID string) (*session, error) {
	p.mu.Lock()
	s := p.sessions[connectionID]
	closed := p.closed
	p.mu.Unlock()
	if s != nil && !s.lost.Load() {
		return s, nil
	}
	if s != nil {
		p.forget(connectionID, s)
	}
	if closed {
		return nil, fmt.Errorf("mcppool: closed")
	}
	p.mu.Lock()
	f := p.opening[connectionID]
	if f == nil {
		f = &inflight{}
		p.opening[connectionID] = f
	}
	p.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	p.mu.Lock()
	s = p.sessions[connectionID]
	p.mu.Unlock()
	if s != nil && !s.lost.Load() {
		return s, nil
	}
	if s != nil {
		p.forget(connectionID, s)
	}
	s, err := p.open(ctx, connectionID)
	if err != nil {
		return s, err
	}
	p.mu.Lock()
	p.sessions[connectionID] = s
	p.mu.Unlock()
	return s, nil
}

// forget drops s if it is still the connection's session.
func (p *Pool) forget(connectionID string, s *session) {
	p.mu.Lock()
	if cur := p.sessions[connectionID]; cur != nil && (s == nil || cur == s) {
		delete(p.sessions, connectionID)
		s = cur
	} else {
		s = nil
	}
	p.mu.Unlock()
	s.close()
}

func (p *Pool) open(ctx context.Context, connectionID string) (*session, error) {
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return nil, store.ErrNotFound
	}
	info, err := p.load(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	s := &session{id: id, info: info}
	if info.Status == connectors.StatusDisconnected {
		return s, &connectors.ErrReconnectRequired{ConnectionID: id, Server: info.Slug, Code: connectors.CodeDisconnected}
	}
	if info.Auth != catalog.AuthNone || info.Configured {
		// Surface a dead login as its typed error before dialling.
		if _, err := p.o.Credentials.Token(ctx, id); err != nil {
			return s, err
		}
	}
	c, err := p.dial(ctx, s)
	if err != nil {
		return s, err
	}
	c.OnNotification(s.progress.notify)
	s.c = c
	return s, nil
}

func (p *Pool) dial(ctx context.Context, s *session) (*client.Client, error) {
	key := eraKey(s.info)
	known := p.eras.get(key)
	if s.info.Transport == "sse" {
		known = eraLegacy // HTTP+SSE is the 2024-11-05 transport: handshake only
	}
	c, got, err := connect(ctx, func(listen bool) (*client.Client, *probeWatch, error) { return p.newClient(ctx, s, listen) }, known)
	p.eras.set(key, got)
	return c, explain(s.info, err, true)
}

// eraKey names a server for the era memory: its catalog row and where it is
// reached, so a row pointed at another server is probed again.
func eraKey(info ServerInfo) string {
	if info.Transport == "stdio" {
		return info.ServerID + " " + info.Command + " " + strings.Join(info.Args, " ")
	}
	return info.ServerID + " " + info.URL
}

func (p *Pool) newClient(ctx context.Context, s *session, listen bool) (*client.Client, *probeWatch, error) {
	switch s.info.Transport {
	case "http":
		hc, watch := watchProbe(checkAnswers(p.httpClient(s), s.info.Slug))
		watch.listens = true
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPHeaderFunc(p.headerFunc(s))}
		if listen {
			// Deprecated for 2026-07-28, which has no GET stream; only
			// sessions of the handshake era ask for it.
			opts = append(opts, transport.WithContinuousListening()) //nolint:staticcheck // SA1019: see above
		}
		c, err := streamableClient(s.info, p.clientOptions(s.info), opts...)
		return c, watch, err
	case "sse":
		c, err := sseClient(s.info, p.clientOptions(s.info), transport.WithHTTPClient(checkAnswers(p.httpClient(s), s.info.Slug)), transport.WithHeaderFunc(p.headerFunc(s)))
		if err == nil {
			c.OnConnectionLost(func(error) { s.lost.Store(true) })
		}
		return c, nil, err
	case "stdio":
		if s.info.Command == "" {
			return nil, nil, fmt.Errorf("%s: a stdio server needs a command in its catalog config", s.info.Slug)
		}
		env, err := p.stdioEnv(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		c, err := stdioClient(s.info, p.clientOptions(s.info), env)
		return c, nil, err
	}
	return nil, nil, fmt.Errorf("%s: unknown transport %q", s.info.Slug, s.info.Transport)
}

// clientOptions are every session's: the server's forms are declined, or
// answered with their defaults, or sent to a person, where the operator
// said so.
func (p *Pool) clientOptions(info ServerInfo) []client.ClientOption {
	var h client.ElicitationHandler = declineElicitation{}
	switch {
	case info.AnswerDefaults:
		h = defaultsElicitation{}
	case info.AskPerson:
		h = personElicitation{wait: info.InputWait, log: p.log}
	}
	return []client.ClientOption{client.WithElicitationHandler(h)}
}

// withProbeBound lets the server/discover probe take as long as a listing
// may. mcp-go takes a probe that has not answered in 5 s for a server of the
// handshake era; on a loaded machine a stateless server answers later than
// that, and the handshake it is then sent fails (issue 29, item 4). A server
// of that era refuses the probe at once, so only a silent server waits, and
// it fails at the row's own bound instead of being taken for another era.
func withProbeBound(info ServerInfo, co []client.ClientOption) []client.ClientOption {
	return append(slices.Clip(co), client.WithDiscoverTimeout(or(info.ListTimeout, ListTimeout)))
}

func streamableClient(info ServerInfo, co []client.ClientOption, opts ...transport.StreamableHTTPCOption) (*client.Client, error) {
	t, err := transport.NewStreamableHTTP(info.URL, opts...)
	if err != nil {
		return nil, err
	}
	return client.NewClient(&rawStreamable{t, info.AskPerson}, withProbeBound(info, co)...), nil
}

func sseClient(info ServerInfo, co []client.ClientOption, opts ...transport.ClientOption) (*client.Client, error) {
	t, err := transport.NewSSE(info.URL, opts...)
	if err != nil {
		return nil, err
	}
	return client.NewClient(&rawSSE{t}, withProbeBound(info, co)...), nil
}

func stdioClient(info ServerInfo, co []client.ClientOption, env []string) (*client.Client, error) {
	t := transport.NewStdioWithOptions(info.Command, env, info.Args, transport.WithCommandFunc(stdioCommand))
	if err := t.Start(context.Background()); err != nil {
		return nil, commandError(info, err)
	}
	return client.NewClient(&rawStdio{t, info.AskPerson}, withProbeBound(info, co)...), nil
}

type envSource interface {
	Env(ctx context.Context, id uuid.UUID) ([]string, error)
	Meta(ctx context.Context, id uuid.UUID) (map[string]any, error)
}

func (p *Pool) stdioEnv(ctx context.Context, s *session) ([]string, error) {
	if es, ok := p.o.Credentials.(envSource); ok && (s.info.Auth != catalog.AuthNone || s.info.Configured) {
		return es.Env(ctx, s.id)
	}
	return nil, nil
}

// stdioMeta puts the connection's token in the request's _meta.
func (p *Pool) stdioMeta(ctx context.Context, s *session) (*mcp.Meta, error) {
	if s.info.Auth == catalog.AuthNone && !s.info.Configured {
		return nil, nil
	}
	if es, ok := p.o.Credentials.(envSource); ok {
		m, err := es.Meta(ctx, s.id)
		if err != nil || len(m) == 0 {
			return nil, err
		}
		return &mcp.Meta{AdditionalFields: m}, nil
	}
	if s.info.Configured {
		return nil, nil
	}
	cred, err := p.o.Credentials.Token(ctx, s.id)
	if err != nil {
		return nil, err
	}
	return &mcp.Meta{AdditionalFields: map[string]any{connectors.MetaTokenField: cred.AccessToken}}, nil
}
