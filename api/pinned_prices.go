package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// The Tools view's coin picker of a Pinned prices login: search CoinGecko
// (with the key being pasted, or the stored one), read and replace the list.
func (s *Server) pinnedPricesRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/mcp/pinned-prices/search", Tag: "connections",
			Summary: "Search CoinGecko coins for a Pinned prices login not connected yet, with the key in the body (used for this search only, never stored)",
			Body:    pinnedSearchInput{}, Reply: []pinnedprices.Coin{}, Handle: s.pinnedSearchWithKey, NoTx: true},
		{Method: "GET", Path: "/api/mcp/connections/:id/pinned-prices", Tag: "connections",
			Summary: "The coins a Pinned prices login quotes at run start", Reply: []pinnedprices.Coin{}, Handle: listPinnedCoins},
		{Method: "GET", Path: "/api/mcp/connections/:id/pinned-prices/search", Tag: "connections",
			Summary: "Search CoinGecko coins (q) with a connected Pinned prices login's stored key",
			Reply:   []pinnedprices.Coin{}, Handle: s.pinnedSearchStored},
		{Method: "PUT", Path: "/api/mcp/connections/:id/pinned-prices", Tag: "connections",
			Summary: "Replace a Pinned prices login's coins (1 to 20, each quoted by CoinGecko)",
			Body:    pinnedCoinsInput{}, Reply: []pinnedprices.Coin{}, Handle: s.putPinnedCoins, NoTx: true},
	}
}

type pinnedSearchInput struct {
	Key   string `json:"key"`
	Query string `json:"query"`
}

type pinnedCoinsInput struct {
	Coins []pinnedprices.Coin `json:"coins"`
}

func (s *Server) pinnedSearchWithKey(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	var in pinnedSearchInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	key := strings.TrimSpace(in.Key)
	if key == "" {
		return 0, nil, invalidField("key", "is required: the CoinGecko Pro API key to search with")
	}
	if strings.TrimSpace(in.Query) == "" {
		return 0, nil, invalidField("query", "is required")
	}
	baseURL, err := grants.PublishedAdapterURL(ctx, db, pinnedprices.Name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "not_set_up", Message: "the catalog has no Pinned prices server"}
	}
	if err != nil {
		return 0, nil, err
	}
	conn := adapters.Conn{HTTP: s.MCP.KeyHTTP, BaseURL: baseURL, Cred: connectors.Credential{AccessToken: key}}
	return s.pinnedSearch(ctx, conn, in.Query)
}

func (s *Server) pinnedSearchStored(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	q := strings.TrimSpace(c.Query("q"))
	login, err := s.pinnedLogin(ctx, c, db, p, true)
	if err != nil {
		return 0, nil, err
	}
	if q == "" {
		return 0, nil, invalidField("q", "is required")
	}
	return s.pinnedSearch(ctx, login.adapterConn(s), q)
}

func (s *Server) pinnedSearch(ctx context.Context, conn adapters.Conn, query string) (int, any, error) {
	actx, cancel := context.WithTimeout(ctx, host.Timeout)
	defer cancel()
	coins, err := pinnedprices.Search(actx, conn, query)
	if err != nil {
		return 0, nil, s.coinGeckoFailure(err, conn.Cred.AccessToken)
	}
	return http.StatusOK, coins, nil
}

func listPinnedCoins(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if _, err := pinnedServerURL(ctx, db, conn); err != nil {
		return 0, nil, err
	}
	coins, err := pinnedprices.Coins(ctx, db, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, coins, nil
}

func (s *Server) putPinnedCoins(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	login, err := s.pinnedLogin(ctx, c, db, p, true)
	if err != nil {
		return 0, nil, err
	}
	var in pinnedCoinsInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	coins, err := s.pinnedConnect().CheckCoins(ctx, login.adapterConn(s), in.Coins)
	if err != nil {
		return 0, nil, s.coinGeckoFailure(err, login.cred.AccessToken)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error { return pinnedprices.ReplaceCoins(ctx, tx, login.conn.ID, coins) })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, coins, nil
}

// pinnedConnect is the Pinned prices adapter's connect step and coin check
// over this server's database and key client.
func (s *Server) pinnedConnect() pinnedprices.Connect {
	return pinnedprices.Connect{DB: s.DB, HTTP: s.MCP.KeyHTTP, Timeout: host.Timeout}
}

// pinnedLoginRef is a visible Pinned prices login with what calling
// CoinGecko for it takes.
type pinnedLoginRef struct {
	conn    connections.Connection
	baseURL string
	cred    connectors.Credential
}

func (l pinnedLoginRef) adapterConn(s *Server) adapters.Conn {
	return adapters.Conn{HTTP: s.MCP.KeyHTTP, BaseURL: l.baseURL, Cred: l.cred}
}

// pinnedLogin loads the login of :id, visible to the caller and of the
// Pinned prices adapter; withKey also resolves its stored key, which only a
// connected login has, and which a platform login lends to instance admins only.
func (s *Server) pinnedLogin(ctx context.Context, c *gin.Context, db store.DB, p access.Principal, withKey bool) (pinnedLoginRef, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return pinnedLoginRef{}, err
	}
	base, err := pinnedServerURL(ctx, db, conn)
	if err != nil {
		return pinnedLoginRef{}, err
	}
	ref := pinnedLoginRef{conn: conn, baseURL: base}
	if !withKey {
		return ref, nil
	}
	if conn.OwnerScope == grants.ScopePlatform && !p.Admin {
		return pinnedLoginRef{}, access.ErrForbidden
	}
	if s.MCP.Engine == nil {
		return pinnedLoginRef{}, notConfigured()
	}
	if conn.Status != connections.StatusConnected {
		return pinnedLoginRef{}, &Error{Status: http.StatusConflict, Code: "not_connected", Message: "the login is " + string(conn.Status) + "; connect it first"}
	}
	ref.cred, err = s.MCP.Engine.Resolver().Token(ctx, uuid.MustParse(conn.ID))
	if err != nil {
		return pinnedLoginRef{}, err
	}
	return ref, nil
}

// pinnedServerURL is the catalog URL of the login's server, which must be
// served by the Pinned prices adapter.
func pinnedServerURL(ctx context.Context, db store.DB, conn connections.Connection) (string, error) {
	srv, err := grants.LoadServerRoute(ctx, db, conn.ServerID)
	if err != nil {
		return "", err
	}
	if !isPinnedPrices(srv) {
		return "", &Error{Status: http.StatusUnprocessableEntity, Code: "not_pinned_prices",
			Message: conn.ServerSlug + " is not a Pinned prices login; only those pin coins"}
	}
	return srv.URL, nil
}

// isPinnedPrices reports whether a catalog row is served by the Pinned
// prices adapter.
func isPinnedPrices(srv grants.ServerRoute) bool { return pinnedprices.Serves(srv) }

// coinGeckoFailure maps a failed search or quote: a refused key is
// key_rejected; anything else says CoinGecko could not answer, with the
// key kept out of the message and the log.
func (s *Server) coinGeckoFailure(err error, key string) error {
	var v *validation.Error
	if errors.As(err, &v) {
		return err // a coin or the key refused on its own field
	}
	if errors.Is(err, adapters.ErrRejected) {
		return keyRejected(pinnedprices.Name)
	}
	if errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
		return addressRefused(pinnedprices.Name, connections.ErrAddressRefused)
	}
	msg := err.Error()
	if key != "" {
		msg = strings.ReplaceAll(msg, key, "[REDACTED]")
	}
	s.Log.Warn("pinned prices: CoinGecko call failed", "err", msg)
	return &Error{Status: http.StatusBadGateway, Code: "service_failed", Message: "CoinGecko could not answer: " + msg}
}
