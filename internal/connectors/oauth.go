package connectors

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/oauth2"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/dpop"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// PendingTTL is how long an authorization URL stays usable.
const PendingTTL = 15 * time.Minute

// ErrBadState: the callback's state is unknown, used or expired.
var ErrBadState = errors.New("connectors: unknown or expired OAuth state")

// BeginOAuth starts a login for an OAuth connection: it stores a pending
// login (hash of a fresh single-use state, the sealed PKCE verifier, the
// redirect URI) and returns the provider's authorization URL. The login is
// completed by CompleteOAuth, from the HTTP callback or the CLI's loopback
// listener.
func (e *Engine) BeginOAuth(ctx context.Context, id uuid.UUID, redirectURL string) (string, error) {
	if err := e.active(); err != nil {
		return "", err
	}
	u, err := url.Parse(redirectURL)
	if err != nil || (u.Scheme != "https" && (u.Scheme != "http" || !isLoopbackHost(u.Hostname()))) {
		return "", fmt.Errorf("connectors: redirect URL must be https, or http on loopback: %q", redirectURL)
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return "", err
	}
	b := e.bindingFor(rec)
	if b.err != nil {
		return "", fmt.Errorf("connection %s: provider %s: %w", rec.conn.ServerSlug, b.ref.Provider, b.err)
	}
	if b.oauth == nil {
		return "", fmt.Errorf("connection %s (%s) has no OAuth provider loaded (provider %q)", rec.conn.ServerSlug, id, b.ref.Provider)
	}
	state := randomToken()
	verifier := oauth2.GenerateVerifier()
	sh := stateHash(state)
	secret := verifier
	if dpopOffered(rec) {
		// The login's DPoP key rides sealed with the verifier (after a
		// newline, which no verifier holds) until the code is exchanged.
		k, err := dpop.GenerateKey()
		if err != nil {
			return "", err
		}
		jwk, err := k.MarshalPrivate()
		if err != nil {
			return "", err
		}
		secret += "\n" + string(jwk)
	}
	ct, err := e.keys.Seal([]byte(secret), sh)
	if err != nil {
		return "", err
	}
	authURL, err := b.oauth.AuthCodeURL(AuthRequest{SubService: b.ref.SubService, State: state, Verifier: verifier,
		RedirectURL: redirectURL, Resource: resourceOf(rec)})
	if err != nil {
		return "", err
	}
	// The URL carries the state: it is kept sealed, for the API to read back
	// (PendingAuthorizationURL) instead of passing through workflow history.
	sealedURL, err := e.keys.Seal([]byte(authURL), authURLAAD(sh))
	if err != nil {
		return "", err
	}
	_, err = e.db.Exec(ctx, `
INSERT INTO connection_oauth_pending (state_hash, connection_id, redirect_uri, key_id, verifier, expires_at, issuer, authorization_url)
VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), nullif($7, ''), $8)`, sh, id, redirectURL, e.keys.ActiveKeyID(), ct,
		PendingTTL.Seconds(), issuerOf(rec), sealedURL)
	if err != nil {
		return "", err
	}
	// Old abandoned logins of any connection are garbage.
	_, _ = e.db.Exec(ctx, `DELETE FROM connection_oauth_pending WHERE expires_at < now() - interval '1 day'`)
	e.log.Info("connectors: oauth login started", "connection", id, "server", rec.conn.ServerSlug)
	return authURL, nil
}

// CompleteOAuth finishes a pending login: it consumes the state (single use),
// exchanges the code with the PKCE verifier, stores the credential and marks
// the connection connected. It returns the connection id.
func (e *Engine) CompleteOAuth(ctx context.Context, state, code string) (uuid.UUID, error) {
	if err := e.active(); err != nil {
		return uuid.Nil, err
	}
	if state == "" || code == "" {
		return uuid.Nil, ErrBadState
	}
	sh := stateHash(state)
	var (
		id          uuid.UUID
		redirectURI string
		ct          []byte
		expires     time.Time
		issuer      string
	)
	err := e.db.QueryRow(ctx, `DELETE FROM connection_oauth_pending WHERE state_hash = $1
RETURNING connection_id, redirect_uri, verifier, expires_at, coalesce(issuer, '')`, sh).Scan(&id, &redirectURI, &ct, &expires, &issuer)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrBadState
	}
	if err != nil {
		return uuid.Nil, err
	}
	if time.Now().After(expires) {
		return id, ErrBadState
	}
	opened, err := e.keys.Open(ct, sh)
	if err != nil {
		return id, fmt.Errorf("connectors: pending login of %s cannot be decrypted: %w", id, err)
	}
	verifier, dpopKey, _ := strings.Cut(string(opened), "\n")
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return id, err
	}
	b := e.bindingFor(rec)
	if b.oauth == nil {
		return id, fmt.Errorf("connection %s (%s) has no OAuth provider loaded", rec.conn.ServerSlug, id)
	}
	// The server moved to another authorization server while the login was
	// pending: the code is the former server's, and the row's token
	// endpoint is the new one's, which must never see it (nor its verifier).
	if now := issuerOf(rec); issuer != "" && now != "" && issuer != now {
		e.log.Warn("connectors: oauth login started at another authorization server than the server now names; not exchanged",
			"connection", id, "server", rec.conn.ServerSlug, "code", CodeIssuerChanged)
		return id, fmt.Errorf("connection %s: the server moved to another authorization server while the login was pending; start the login again (%s)",
			rec.conn.ServerSlug, CodeIssuerChanged)
	}
	xctx, cancel := context.WithTimeout(ctx, e.t.RefreshTimeout)
	defer cancel()
	cred, err := b.oauth.Exchange(xctx, ExchangeRequest{SubService: b.ref.SubService, Code: code, Verifier: verifier,
		RedirectURL: redirectURI, Resource: resourceOf(rec), DPoPKey: dpopKey})
	if err != nil {
		class := b.oauth.ClassifyError(err)
		e.log.Warn("connectors: oauth code exchange failed", "connection", id, "server", rec.conn.ServerSlug, "code", class.Code)
		return id, fmt.Errorf("connection %s: the provider refused the login (%s)", rec.conn.ServerSlug, class.Code)
	}
	hint := cred.Extra[ExtraAccountHint]
	if _, ok := cred.Extra[ExtraAccountHint]; ok {
		extra := make(map[string]string, len(cred.Extra))
		for k, v := range cred.Extra {
			if k != ExtraAccountHint {
				extra[k] = v
			}
		}
		cred.Extra = extra
	}
	v, err := putCredential(ctx, e.db, e.keys, id, cred, hint)
	if err != nil {
		return id, err
	}
	e.changed(ctx, id, v)
	e.log.Info("connectors: oauth login completed", "connection", id, "server", rec.conn.ServerSlug)
	return id, nil
}

// PendingAuthorizationURL returns the authorization URL of a connection's
// unexpired pending login (the latest one), opened from its sealed copy.
func (e *Engine) PendingAuthorizationURL(ctx context.Context, id uuid.UUID) (string, error) {
	if err := e.active(); err != nil {
		return "", err
	}
	var sh, ct []byte
	err := e.db.QueryRow(ctx, `SELECT state_hash, authorization_url FROM connection_oauth_pending
WHERE connection_id = $1 AND expires_at > now() AND authorization_url IS NOT NULL
ORDER BY created_at DESC LIMIT 1`, id).Scan(&sh, &ct)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrBadState
	}
	if err != nil {
		return "", err
	}
	u, err := e.keys.Open(ct, authURLAAD(sh))
	if err != nil {
		return "", fmt.Errorf("connectors: the pending login of %s cannot be opened: %w", id, err)
	}
	return string(u), nil
}

// authURLAAD binds a sealed authorization URL to its pending row, apart from
// the verifier sealed on the same row.
func authURLAAD(stateHash []byte) []byte {
	return append([]byte("connection_oauth_pending.authorization_url\x00"), stateHash...)
}

// issuerOf is the authorization server's issuer the catalog row was
// prepared with, recorded with each pending login for the RFC 9207 check.
func issuerOf(rec *record) string {
	c, _ := catalog.ParseConfig(rec.serverCfg) // lenient: no issuer recorded
	return c.OAuth.Issuer
}

// dpopOffered reports whether the catalog row's authorization server
// advertises ES256 DPoP proofs (its dpop_signing_alg_values_supported, as
// mcpoauth writes it into the row): its logins are then DPoP-bound.
func dpopOffered(rec *record) bool {
	var c struct {
		OAuth struct {
			Algs []string `json:"dpop_signing_alg_values_supported"`
		} `json:"oauth"`
	}
	_ = json.Unmarshal(rec.serverCfg, &c) // lenient: no DPoP
	return dpop.Supported(c.OAuth.Algs)
}

func resourceOf(rec *record) string {
	c, _ := catalog.ParseConfig(rec.serverCfg) // lenient: no resource recorded
	return c.Resource
}

func stateHash(state string) []byte {
	h := sha256.Sum256([]byte(state))
	return h[:]
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ClassifyOAuthError is the common verdict on a token endpoint failure,
// for providers to use in ClassifyError:
//
//   - invalid_grant, and the codes providers send instead of it for a dead
//     refresh token or client (invalid_request, invalid_client,
//     unauthorized_client, access_denied), or a 400/401/403 without a code:
//     permanent, reconnect required;
//   - ErrIssuerChanged (a login of another authorization server than the
//     row's): permanent, CodeIssuerChanged;
//   - 5xx, 429, 408, other 4xx codes, timeouts, network errors and
//     unparseable responses: transient, retried with backoff.
func ClassifyOAuthError(err error) ErrorClass {
	if errors.Is(err, ErrIssuerChanged) {
		return ErrorClass{Permanent: true, Code: CodeIssuerChanged}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		switch re.ErrorCode {
		case "invalid_grant", "invalid_request", "invalid_client", "unauthorized_client", "access_denied":
			return ErrorClass{Permanent: true, Code: re.ErrorCode}
		case "":
			switch status {
			case 400, 401, 403:
				return ErrorClass{Permanent: true, Code: fmt.Sprintf("http_%d", status)}
			}
			return ErrorClass{Code: fmt.Sprintf("http_%d", status)}
		default: // temporarily_unavailable, server_error, slow_down, unknown codes
			return ErrorClass{Code: safeCode(re.ErrorCode)}
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		// The outbound policy refused the endpoint (or a redirect): not the
		// provider's verdict on the login, so the stored grant is kept.
		return ErrorClass{Code: "endpoint_refused"}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrorClass{Code: "timeout"}
	case errors.As(err, &ne):
		return ErrorClass{Code: "network"}
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) || strings.Contains(err.Error(), "cannot parse") || strings.Contains(err.Error(), "missing access_token") {
		return ErrorClass{Code: "malformed_response"}
	}
	return ErrorClass{Code: "refresh_error"}
}

// safeCode keeps an OAuth error code only if it looks like one, so that no
// provider text reaches logs or the database.
func safeCode(c string) string {
	if len(c) == 0 || len(c) > 40 {
		return "oauth_error"
	}
	for _, r := range c {
		if r != '_' && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return "oauth_error"
		}
	}
	return c
}
