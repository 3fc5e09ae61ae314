// Package api is the operator HTTP API: a Gin router, authentication, one
// transaction per mutating request, error mapping and the OpenAPI document.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/guilds/guilds/internal/errorreport"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// Deps are what the API needs; main builds them.
type Deps struct {
	DB           *pgxpool.Pool
	Redis        *redis.Client
	Temporal     client.Client // may be nil in tests that do not start workflows
	Integrations *integrations.Registry
	Log          *slog.Logger
	AuthMode     string // "token" or "local"
	// LocalUserID is the user every request acts as in local mode.
	LocalUserID   string
	PublicBaseURL string
	// Tools holds the native tool implementations the grants views and offers
	// consult; nil means none are built in.
	Tools *tools.Registry
	// Models resolves model keys (organisation or box) and holds the keyring
	// organisation model keys are sealed with; nil means box keys only.
	Models *models.Resolver
	// RunTaskQueue is where runs are started; "" means worker.TaskQueue.
	RunTaskQueue string
	// URLPolicy vets the URLs the instance admin writes into the catalog; the
	// zero value allows https to public addresses only.
	URLPolicy mcpoauth.Policy
	// RunEvents wakes run event streams when a run changes; nil means they
	// poll (runs.PollInterval). Serve runs it.
	RunEvents *runs.Listener
	// Codec, when set, serves the Temporal payload codec endpoint (CodecPath)
	// for the UI and CLI; CodecWithoutToken lets anyone who can reach the API
	// use it, which boot allows only when the API listens on loopback.
	Codec             converter.PayloadCodec
	CodecWithoutToken bool
	// MCP serves the remote MCP connector routes (api/mcp.go).
	MCP MCPDeps
	// Reporter receives internal errors and panics (SENTRY_DSN); nil is off.
	Reporter *errorreport.Reporter
	// TemporalUI is the Temporal UI's address of the namespace's workflows
	// (…/namespaces/default/workflows/), for the app's run links; "" hides them.
	TemporalUI string
	// MaxAgentsPerOrg caps the agents of one organisation
	// (GUILDS_MAX_AGENTS_PER_ORG); 0 = config.DefaultMaxAgentsPerOrg.
	MaxAgentsPerOrg int
	// HandlerTimeout, when set, replaces every route's handler deadline
	// (DefaultTimeout, RemoteTimeout); tests shorten it.
	HandlerTimeout time.Duration
}

// Server holds the dependencies of every handler.
type Server struct {
	Deps
	routes []route
	offers *grants.Service // built once: it caches shaped schemas across requests
}

// New builds the server and its route table.
func New(d Deps) *Server {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Integrations == nil {
		d.Integrations = integrations.New(nil)
	}
	s := &Server{Deps: d, offers: grants.NewService(d.Tools, d.Integrations, d.Log)}
	s.routes = s.routeTable()
	return s
}

// Handler returns the HTTP handler with every route mounted.
func (s *Server) Handler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// A *gin.Context used as a context.Context then follows the request's
	// (with the route's deadline) instead of never ending.
	r.ContextWithFallback = true
	r.Use(s.recoverer(), s.accessLog(), metricsMiddleware(), oauthLanding())
	r.NoRoute(s.serveApp) // the operator app (api/webapp.go); /api paths get the JSON 404
	r.NoMethod(func(c *gin.Context) {
		writeError(c, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: "method not allowed on this path"})
	})
	for _, rt := range s.routes {
		r.Handle(rt.Method, rt.Path, s.mount(rt))
	}
	return r
}

// Serve runs the HTTP server until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, addr string) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	return s.ServeOn(ctx, ln)
}

// Listen binds the API's address, so a caller can report a busy port before
// announcing anything, and know the API answers once ServeOn runs.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s (set GUILDS_HTTP_ADDR): %w", addr, err)
	}
	return ln, nil
}

// ServeOn serves the API on ln until ctx ends, then shuts down gracefully.
func (s *Server) ServeOn(ctx context.Context, ln net.Listener) error {
	if s.RunEvents != nil {
		lctx, stop := context.WithCancel(ctx)
		defer stop()
		go s.RunEvents.Run(lctx)
	}
	srv := s.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// Timeouts of the HTTP server. A request has ReadTimeout to arrive whole
// (headers within ReadHeaderTimeout); its handler then has until WriteTimeout
// to answer, which covers the slowest one (an OAuth connect waits up to two
// minutes for the workflow). The run event stream lifts its own write deadline.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = time.Minute
	WriteTimeout      = 3 * time.Minute
	IdleTimeout       = 2 * time.Minute
)

// HTTPServer is the server ServeOn runs: the handler with the timeouts above.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout: ReadTimeout, WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout}
}

func (s *Server) recoverer() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if v := recover(); v != nil {
				s.Log.Error("panic in handler", "path", c.FullPath(), "panic", v)
				s.Reporter.Panic(c.Request.Context(), v, reportTags(c))
				writeError(c, &Error{Status: 500, Code: "internal", Message: "internal error"})
				c.Abort()
			}
		}()
		c.Next()
	}
}

func (s *Server) accessLog() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		// The query string is left out: OAuth callbacks carry codes and state there.
		s.Log.Info("http", "method", c.Request.Method, "route", c.FullPath(), "status", c.Writer.Status(),
			"duration_ms", time.Since(start).Milliseconds())
	}
}
