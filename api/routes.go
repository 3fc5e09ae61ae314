package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

// handler serves one request with the database (a transaction for mutating
// methods) and the caller. It returns the status and body to write on success;
// nothing is written until the transaction has committed.
//
// ctx is the request's context with the route's deadline: every database,
// Temporal and remote call takes it, so the work stops when the client goes
// away or the deadline passes. c is only for reading the request and writing
// headers and cookies (a *gin.Context is a context.Context that is never
// cancelled).
type handler func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error)

// Deadlines of a handler's work (route.Timeout overrides them). Both are
// below WriteTimeout, so a handler that runs out of time still answers.
const (
	// DefaultTimeout bounds a handler that only uses the database.
	DefaultTimeout = 30 * time.Second
	// RemoteTimeout bounds a NoTx handler, which calls a remote service.
	RemoteTimeout = 2 * time.Minute
)

// route is one entry of the table from which both the router and the OpenAPI document are built.
type route struct {
	Method  string
	Path    string // Gin syntax, e.g. /api/orgs/:id
	Summary string
	Tag     string
	Public  bool // no authentication
	Admin   bool // instance admins only
	Body    any  // a value of the request body's type, for the OpenAPI document
	Reply   any  // a value of the success body's type, for the OpenAPI document
	Status  int  // success status in the document (200 when zero)
	Handle  handler
	Raw     gin.HandlerFunc // for streams and redirects, which write the response themselves
	// NoTx: the handler calls a remote service, so it gets the pool instead of
	// a transaction and opens its own short ones around its writes (s.inTx):
	// no transaction is held across a remote call.
	NoTx bool
	// MaxBody bounds the request body (maxBody when zero).
	MaxBody int64
	// Timeout bounds Handle's work (DefaultTimeout, or RemoteTimeout for
	// NoTx, when zero). Raw routes set their own.
	Timeout time.Duration
}

// routeTable lists every route. Each area adds its own slice from its own file.
func (s *Server) routeTable() []route {
	var all []route
	all = append(all, s.opsRoutes()...)
	all = append(all, s.instanceRoutes()...)
	all = append(all, s.workerHealthRoutes()...)
	all = append(all, s.orgRoutes()...)
	all = append(all, s.orgSettingsRoutes()...)
	all = append(all, s.nativeRoutes()...)
	all = append(all, s.runRoutes()...)
	all = append(all, s.runMediaRoutes()...)
	all = append(all, s.grantRoutes()...)
	all = append(all, s.mcpRoutes()...)
	all = append(all, s.oauthClientMetadataRoutes()...)
	all = append(all, s.githubRoutes()...)
	all = append(all, s.githubCheckRoutes()...)
	all = append(all, s.guildRepositoryRoutes()...)
	all = append(all, s.pinnedPricesRoutes()...)
	all = append(all, s.driveRoutes()...)
	all = append(all, s.connectionHealthRoutes()...)
	all = append(all, s.toolRefreshRoutes()...)
	all = append(all, s.codecRoutes()...)
	all = append(all, s.tokenRoutes()...)
	all = append(all, s.secretRoutes()...)
	all = append(all, s.approvalRoutes()...)
	all = append(all, s.inputRoutes()...)
	all = append(all, s.auditRoutes()...)
	all = append(all, s.budgetRoutes()...)
	all = append(all, s.scheduleRoutes()...)
	all = append(all, s.groupChatRoutes()...)
	all = append(all, s.scriptRoutes()...)
	all = append(all, s.sessionRoutes()...)
	all = append(all, s.workspaceRoutes()...)
	all = append(all, s.studioRoutes()...)
	all = append(all, s.builderRoutes()...)
	return all
}

func (s *Server) mount(rt route) gin.HandlerFunc {
	return func(c *gin.Context) {
		var p access.Principal
		if s.AuthMode == "local" && !rt.Public {
			if e := checkLoopbackRequest(c, false); e != nil {
				writeError(c, e)
				return
			}
		}
		if !rt.Public {
			var err error
			p, err = s.authenticate(c)
			if err != nil {
				s.fail(c, err)
				return
			}
			if rt.Admin && !p.Admin {
				s.fail(c, access.ErrForbidden)
				return
			}
			c.Set(principalKey, p)
		}
		// The body is read before anything holds a connection, so a slow
		// client ties up nothing but its own socket.
		if err := readBody(c, rt.MaxBody); err != nil {
			s.fail(c, err)
			return
		}
		if rt.Raw != nil {
			rt.Raw(c)
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), s.timeout(rt))
		defer cancel()
		// Helpers that read c.Request.Context() see the same deadline.
		c.Request = c.Request.WithContext(ctx)
		var status int
		var body any
		var err error
		switch {
		case c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead || rt.NoTx:
			status, body, err = rt.Handle(ctx, c, s.db(), p)
		default:
			// One transaction per mutating request: an error anywhere rolls all of it back.
			err = s.inTx(ctx, func(tx pgx.Tx) error {
				var herr error
				status, body, herr = rt.Handle(ctx, c, tx, p)
				return herr
			})
		}
		if err != nil {
			s.fail(c, err)
			return
		}
		runAfterCommit(c)
		if status == http.StatusNoContent || body == nil {
			c.Status(status)
			return
		}
		c.JSON(status, body)
	}
}

const principalKey = "guilds.principal"

// timeout is the deadline of a route's handler.
func (s *Server) timeout(rt route) time.Duration {
	switch {
	case rt.Timeout > 0:
		return rt.Timeout
	case s.HandlerTimeout > 0:
		return s.HandlerTimeout
	case rt.NoTx:
		return RemoteTimeout
	}
	return DefaultTimeout
}

// db is the pool as handlers use it: each statement waits a bounded time for
// a connection and gives it back at once.
func (s *Server) db() store.Bounded { return store.Bounded{Pool: s.DB} }

// inTx runs fn in one transaction on a bounded-acquired connection.
func (s *Server) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.db().InTx(ctx, fn)
}
