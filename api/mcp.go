package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
	"github.com/guilds/guilds/worker"
	"github.com/guilds/guilds/workflows/connect"
)

// MCPDeps are what the remote MCP connector routes need; main builds them.
type MCPDeps struct {
	Engine *connectors.Engine // nil: connectors are not configured on this box
	Pool   *mcppool.Pool
	// Adapters serves local adapters' logins: their calls, key checks and
	// Drive's folder routes (nil with Pool when connectors are off).
	Adapters *host.Host
	Keyring  *secret.Keyring // seals OAuth callback parameters for the workflow
	// TaskQueue of the connect workflow; "" means worker.TaskQueue.
	TaskQueue string
	// OAuthDeadline bounds the wait for a callback; 0 means connect.DefaultDeadline.
	OAuthDeadline time.Duration
	// KeyHTTP carries key validation listings; nil means http.DefaultClient.
	KeyHTTP *http.Client
}

// CallbackPath is where providers send the browser back.
const CallbackPath = "/api/mcp/oauth/callback"

func (s *Server) mcpRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/mcp/connect", Tag: "connections",
			Summary: "Connect a remote MCP server or a local adapter at a scope: a key (or the values a server is configured with) is checked with the service and connected now; an OAuth server answers the authorization URL",
			Body:    mcpConnectInput{}, Reply: mcpConnectReply{}, Raw: s.mcpConnect},
		{Method: "GET", Path: CallbackPath, Tag: "connections", Public: true,
			Summary: "OAuth callback: completes the login the state names, in the browser that started it (its cookie); an iss must name the login's authorization server",
			Reply:   mcpCallbackReply{}, Handle: s.mcpCallback, Timeout: RemoteTimeout},
		{Method: "POST", Path: CallbackPath, Tag: "connections",
			Summary: "OAuth callback posted by the operator app: code and state, with the token of the user who started the login",
			Body:    mcpCallbackInput{}, Reply: mcpCallbackReply{}, Handle: s.mcpCallbackPost, NoTx: true},
		{Method: "GET", Path: "/api/mcp/connections/:id/tools", Tag: "connections",
			Summary: "The tools a login listed", Reply: []mcpTool{}, Handle: listMCPTools},
		{Method: "POST", Path: "/api/mcp/connections/:id/call", Tag: "connections",
			Summary: "Call a listed tool of a connected login (the Tools view's Test); the result is redacted and byte-capped",
			Body:    mcpCallInput{}, Reply: mcpCallReply{}, Handle: s.mcpCall, NoTx: true},
	}
}

type mcpConnectInput struct {
	ServerID   string       `json:"server_id,omitempty"`
	Slug       string       `json:"slug,omitempty"`
	OwnerScope grants.Scope `json:"owner_scope"`
	OwnerID    string       `json:"owner_id,omitempty"`
	// Key is the API key of a token server; never stored in plain text.
	Key string `json:"key,omitempty"`
	// Values fill the fields a no-auth server's catalog row declares (sent to
	// it as headers or environment), or the keys of a token server whose row
	// declares key_fields (Wallet, Qonto); sealed like a key, never returned.
	Values map[string]string `json:"values,omitempty"`
	// Coins are a Pinned prices login's list (1 to 20), checked with
	// CoinGecko before the login is stored; no other server takes them.
	Coins []pinnedprices.Coin `json:"coins,omitempty"`
}

type mcpConnectReply struct {
	Connection       connections.Connection `json:"connection"`
	AuthorizationURL string                 `json:"authorization_url,omitempty"`
	Tools            int                    `json:"tools"`
}

type mcpCallbackReply struct {
	ConnectionID string `json:"connection_id"`
	Status       string `json:"status"`
	AccountHint  string `json:"account_hint,omitempty"`
	Tools        int    `json:"tools"`
}

type mcpTool struct {
	Name        string          `json:"name"`
	RemoteName  string          `json:"remote_name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type mcpCallInput struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type mcpCallReply struct {
	Tool   string `json:"tool"`
	Result string `json:"result"`
}

func notConfigured() error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "not_set_up",
		Message: "connectors are not configured on this box (set GUILDS_ENCRYPTION_KEY and GUILDS_CONNECTORS)"}
}

func keyRejected(slug string) error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "key_rejected",
		Message: fmt.Sprintf("%s rejected the key: check it and paste it again", slug)}
}

// mcpConnect runs outside the per-request transaction: the connect workflow
// and the engine read the connection from their own pool, so the connect
// service commits it first, and removes it (when it created it) if anything
// later fails.
func (s *Server) mcpConnect(c *gin.Context) {
	p := c.MustGet(principalKey).(access.Principal)
	out, err := s.doMCPConnect(c, p)
	if body, ok := notSetUpBody(err); ok {
		c.JSON(http.StatusUnprocessableEntity, body) // carries setup_state: unsupported
		return
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// connectService is the connect service over this server's engine and pool.
func (s *Server) connectService() *connections.Service {
	svc := &connections.Service{DB: s.DB, Engine: s.MCP.Engine, Integrations: s.Integrations, Log: s.Log,
		Checker: mcppool.Checker{DB: s.DB, Engine: s.MCP.Engine, HTTP: s.MCP.KeyHTTP, Log: s.Log}}
	if s.MCP.Pool != nil {
		svc.Sessions = s.MCP.Pool
	}
	if s.MCP.Adapters != nil {
		svc.Adapters = s.MCP.Adapters
	}
	return svc
}

func (s *Server) doMCPConnect(c *gin.Context, p access.Principal) (mcpConnectReply, error) {
	var in mcpConnectInput
	if err := bindJSON(c, &in); err != nil {
		return mcpConnectReply{}, err
	}
	if s.MCP.Engine == nil || !s.MCP.Engine.InUse() {
		return mcpConnectReply{}, notConfigured()
	}
	ctx := c.Request.Context()
	out, err := s.connectService().Connect(ctx, p, connections.Request{
		Login:  connections.ConnectInput{ServerID: in.ServerID, Slug: in.Slug, OwnerScope: in.OwnerScope, OwnerID: in.OwnerID},
		Key:    in.Key,
		Values: in.Values,
		BeginOAuth: func(ctx context.Context, conn connections.Connection) (string, error) {
			return s.beginOAuth(ctx, c, conn, p)
		},
		KeyStep: func(ctx context.Context, srv grants.ServerRoute) (*connections.KeyStep, error) {
			step, err := s.pinnedConnect().Step(ctx, srv, in.Key, in.Coins)
			if err != nil {
				return nil, s.coinGeckoFailure(err, in.Key)
			}
			return step, nil
		},
		BeginGitHub: func(ctx context.Context, conn connections.Connection) (string, error) {
			return s.beginGitHub(ctx, c, conn, p)
		},
	})
	if err != nil {
		return mcpConnectReply{}, connectError(err)
	}
	return mcpConnectReply{Connection: out.Connection, AuthorizationURL: out.AuthorizationURL, Tools: out.Tools}, nil
}

// connectError maps the connect service's refusals to the API's codes.
func connectError(err error) error {
	var notConn *connections.NotConnectableError
	var se *connections.ServerError
	switch {
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: "a connected login of this server already exists at this scope"}
	case errors.As(err, &notConn):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "not_remote", Message: notConn.Error()}
	case errors.As(err, &se):
		return checkError(se.Server, se.Err)
	}
	return err
}

// checkError maps a refused key or values check of a server.
func checkError(slug string, err error) error {
	var notBuilt *adapters.ErrNotBuiltIn
	var fe *connectors.FieldsError
	var named *connections.KeyRejectedError
	var unlisted *mcppool.UnlistedError
	switch {
	case errors.As(err, &notBuilt):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "adapter_unavailable", Message: slug + ": " + err.Error()}
	case errors.As(err, &named):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "key_rejected",
			Message:  fmt.Sprintf("%s rejected %s: check it and paste it again", slug, named.Field),
			Problems: []validation.Problem{{Field: "values." + named.Field, Message: "was rejected by the service"}}}
	case errors.Is(err, connections.ErrKeyRejected):
		return keyRejected(slug)
	case errors.Is(err, connections.ErrAddressRefused):
		return addressRefused(slug, err)
	case errors.Is(err, connections.ErrKeyUnchecked):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "validation_failed",
			Message: slug + " could not be reached to check the key; try again"}
	case errors.As(err, &unlisted):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "server_unlisted", Message: unlisted.Error()}
	case errors.Is(err, connectors.ErrNoConfig):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "no_auth", Message: slug + " needs no login"}
	case errors.Is(err, connectors.ErrCatalogConfig):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "catalog_config", Message: err.Error()}
	case errors.As(err, &fe):
		v := &validation.Error{}
		for _, p := range fe.Problems {
			v.Problems = append(v.Problems, validation.Problem{Field: "values." + p.Field, Message: p.Message})
		}
		return v
	case errors.Is(err, mcppool.ErrConfigRejected):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "config_rejected",
			Message: slug + " refused the configured values: check them and connect again"}
	case errors.Is(err, mcppool.ErrConfigUnchecked):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "validation_failed",
			Message: slug + " could not be reached to check the values; try again"}
	}
	return err
}

func addressRefused(slug string, err error) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "address_refused", Message: slug + ": " + err.Error()}
}

// callbackURL is where the provider sends the browser back with the code.
// PUBLIC_BASE_URL is the production setting. Without it the request's Host is
// used, but only when it names this machine: a Host header is the client's to
// choose, and the authorization code must never go to a host it names.
func (s *Server) callbackURL(c *gin.Context) (string, error) {
	if s.PublicBaseURL != "" {
		return strings.TrimRight(s.PublicBaseURL, "/") + CallbackPath, nil
	}
	if !loopbackHost(c.Request.Host) {
		return "", &Error{Status: http.StatusUnprocessableEntity, Code: "public_base_url_required",
			Message: "set PUBLIC_BASE_URL to this API's public origin to connect OAuth logins from a non-loopback address"}
	}
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host + CallbackPath, nil
}

// loopbackHost reports whether a Host header (with or without a port) names
// the local machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) taskQueue() string {
	if s.MCP.TaskQueue != "" {
		return s.MCP.TaskQueue
	}
	return worker.TaskQueue
}

// beginOAuth is the connect service's OAuth strategy as the API runs it:
// the login is bound to the starting browser (a cookie) and user, and the
// connect workflow prepares it and waits for the callback.
func (s *Server) beginOAuth(ctx context.Context, c *gin.Context, conn connections.Connection, p access.Principal) (string, error) {
	if s.Temporal == nil {
		return "", &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the workflow service is not reachable"}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	redirect, err := s.callbackURL(c)
	if err != nil {
		return "", err
	}
	nonce, err := s.bindOAuthStart(ctx, conn.ID, p.UserID)
	if err != nil {
		return "", err
	}
	var urls connect.PendingURLs
	if s.MCP.Engine != nil {
		urls = s.MCP.Engine
	}
	u, err := connect.Start(ctx, s.Temporal, s.taskQueue(), connect.Input{
		ConnectionID: conn.ID, RedirectURI: redirect, Deadline: s.MCP.OAuthDeadline}, urls)
	if err != nil {
		return "", err
	}
	s.setOAuthCookie(c, conn.ID, nonce)
	return u, nil
}

// mcpCallback is the browser's return from the provider: the login its
// state names is completed only with the starting browser's cookie.
func (s *Server) mcpCallback(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	if handled, status, body, err := s.githubCallback(ctx, c, db); handled {
		return status, body, err
	}
	in := mcpCallbackInput{State: c.Query("state"), Code: c.Query("code"), Error: c.Query("error"), Iss: c.Query("iss")}
	return s.completeCallback(ctx, c, db, in, func(pl pendingLogin) error { return pl.checkBrowser(c) })
}

// mcpCallbackPost is the operator app's alternative: it posts the code and
// state back with the API token of the user who started the login.
func (s *Server) mcpCallbackPost(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in mcpCallbackInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	return s.completeCallback(ctx, c, db, in, func(pl pendingLogin) error { return pl.checkUser(p) })
}

type mcpCallbackInput struct {
	State string `json:"state"`
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	Iss   string `json:"iss,omitempty"`
}

// completeCallback finds the login by its state, checks who completes it and
// the issuer before touching it, hands the sealed code to the login's
// workflow and answers with the outcome.
func (s *Server) completeCallback(ctx context.Context, c *gin.Context, db store.DB, in mcpCallbackInput, starter func(pendingLogin) error) (int, any, error) {
	if in.State == "" || s.MCP.Keyring == nil || s.Temporal == nil {
		return 0, nil, errUnknownState
	}
	pl, err := findPending(ctx, db, in.State)
	if errors.Is(err, errUnknownState) {
		return s.repeatedCallback(ctx, c, db, in.State, starter)
	}
	if err != nil {
		return 0, nil, err
	}
	if err := starter(pl); err != nil {
		return 0, nil, err
	}
	if err := pl.checkIssuer(in.Iss); err != nil {
		return 0, nil, err
	}
	connID := pl.ConnectionID
	cb := connect.Callback{StateDigest: stateDigest(in.State)}
	if in.Error != "" || in.Code == "" {
		cb.Error = oauthCode(in.Error)
	} else {
		cb.Sealed, err = acts.Seal(s.MCP.Keyring, connID, acts.CallbackParams{State: in.State, Code: in.Code})
		if err != nil {
			return 0, nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := connect.Deliver(ctx, s.Temporal, connID, cb); err != nil {
		if errors.Is(err, connect.ErrNoLogin) {
			return 0, nil, errUnknownState
		}
		return 0, nil, err
	}
	res, err := connect.Wait(ctx, s.Temporal, connID)
	if err != nil {
		return 0, nil, err
	}
	return s.callbackOutcome(ctx, db, connID, res)
}

// callbackOutcome is the answer to a callback whose login ended with res:
// the same for the callback that completed it and for any repeat of it.
func (s *Server) callbackOutcome(ctx context.Context, db store.DB, connID string, res connect.Result) (int, any, error) {
	if res.Status != connect.StatusConnected {
		return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "oauth_" + string(res.Status), Message: res.Error}
	}
	reply := mcpCallbackReply{ConnectionID: connID, Status: string(res.Status), AccountHint: res.AccountHint, Tools: res.Tools}
	// A login that needs one more choice after the provider's login (Drive's
	// folder) stays pending: say so rather than echo the workflow's outcome.
	if id, err := connstore.ParseID(connID); err == nil {
		if stored, err := connstore.Get(ctx, db, id); err == nil && stored.Status == connstore.StatusPending {
			reply.Status, reply.AccountHint, reply.Tools = string(stored.Status), "", 0
		}
	}
	return http.StatusOK, reply, nil
}

// oauthCode keeps a provider's error parameter only when it looks like an
// OAuth error code.
func oauthCode(s string) string {
	if s == "" {
		return "no_code"
	}
	if len(s) > 40 {
		return "oauth_error"
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') {
			return "oauth_error"
		}
	}
	return s
}

func listMCPTools(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	stored, err := mcppool.Stored(ctx, db, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	out := make([]mcpTool, len(stored))
	for i, t := range stored {
		out[i] = mcpTool{Name: t.Name, RemoteName: t.RemoteName, Description: t.Description, InputSchema: t.Schema}
	}
	return http.StatusOK, out, nil
}

// mcpCall is the Tools view's Test: the call takes a run's path
// (internal/remote), redacted against the login's own credential values, with
// no remaining-calls trailer as no model reads it. What a run would answer as
// an ERROR result the Test answers as an error status when the operator can
// act on it: arguments that do not fit (422), a login to reconnect (409).
// A call the service answered closes the login's circuit breaker.
func (s *Server) mcpCall(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in mcpCallInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	// Every operator sees a platform login, but a direct call acts with the
	// box's own credential, which only an instance admin may use.
	if conn.OwnerScope == grants.ScopePlatform && !p.Admin {
		return 0, nil, access.ErrForbidden
	}
	if s.MCP.Engine == nil || s.MCP.Pool == nil {
		return 0, nil, notConfigured()
	}
	if conn.Status != connections.StatusConnected {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "not_connected", Message: "the login is " + string(conn.Status) + "; connect it first"}
	}
	listed, err := mcppool.Stored(ctx, db, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	i := slices.IndexFunc(listed, func(t mcppool.Tool) bool { return t.RemoteName == in.Tool || t.Name == in.Tool })
	if i < 0 {
		return 0, nil, &validation.Error{Problems: []validation.Problem{{Field: "tool", Message: "is not a tool this login listed"}}}
	}
	tool := listed[i]
	args := in.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) || args[0] != '{' {
		return 0, nil, &validation.Error{Problems: []validation.Problem{{Field: "arguments", Message: "must be a JSON object"}}}
	}
	secrets, err := s.secretsOf(ctx, conn)
	if err != nil {
		return 0, nil, err
	}
	result, err := remote.Call(ctx, s.remoteCallers(), remote.Tool{Kind: conn.Kind(), ConnectionID: conn.ID, RemoteName: tool.RemoteName, Schema: tool.Schema}, args,
		remote.Options{Redactor: tools.NewRedactor(secrets, s.Log), NoTrailer: true, Log: s.Log})
	var argErr *tools.ArgumentError
	var schemaErr *remote.SchemaError
	var rr *connectors.ErrReconnectRequired
	switch {
	case errors.As(err, &argErr):
		v := &validation.Error{}
		for _, msg := range argErr.Problems {
			v.Problems = append(v.Problems, validation.Problem{Field: "arguments", Message: msg})
		}
		return 0, nil, v
	case errors.As(err, &schemaErr):
		return 0, nil, &validation.Error{Problems: []validation.Problem{{Field: "tool", Message: schemaErr.Error() + "; nothing was sent"}}}
	case errors.As(err, &rr):
		return 0, nil, &Error{Status: http.StatusConflict, Code: "reconnect_required", Message: rr.Error()}
	case err == nil:
		// The service answered: a login paused after failures flows again.
		if err := breaker.Reset(ctx, db, conn.ID); err != nil {
			s.Log.WarnContext(ctx, "the login's breaker could not be reset", "connection_id", conn.ID, "err", err)
		}
	}
	return http.StatusOK, mcpCallReply{Tool: tool.RemoteName, Result: result}, nil
}

// remoteCallers are what serve a login's calls, by its catalog kind.
func (s *Server) remoteCallers() remote.Callers {
	c := remote.Callers{MCP: s.MCP.Pool}
	if s.MCP.Adapters != nil {
		c.Adapters = s.MCP.Adapters
	}
	return c
}

// secretsOf is the login's redaction set: its credential values, less the
// configured values its provider declares non-secret. Without it nothing is
// called: a result could carry the credential in clear (runs fail closed too).
func (s *Server) secretsOf(ctx context.Context, conn connections.Connection) ([]string, error) {
	connectionID := conn.ID
	out, err := s.MCP.Engine.Secrets(ctx, uuid.MustParse(connectionID))
	var rr *connectors.ErrReconnectRequired
	switch {
	case errors.Is(err, connectors.ErrNoCredential) && s.needsNoLogin(ctx, conn):
		return nil, nil // holds no credential: nothing of its own to redact
	case errors.As(err, &rr), errors.Is(err, store.ErrBusy):
		return nil, err
	case err != nil:
		s.Log.Warn("mcp test call: the login's redaction set cannot be loaded; nothing called", "connection", connectionID, "err", err)
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "redaction_unavailable",
			Message: "the login's credential cannot be loaded to redact the result, so nothing was called; check GUILDS_ENCRYPTION_KEY or reconnect the login"}
	}
	return out, nil
}

// needsNoLogin reports whether a login's server takes no credential at all
// (ADR 0616); a read error counts as no, so the caller fails closed.
func (s *Server) needsNoLogin(ctx context.Context, conn connections.Connection) bool {
	srv, err := grants.LoadServerRoute(ctx, s.db(), conn.ServerID)
	return err == nil && srv.NoLogin
}
