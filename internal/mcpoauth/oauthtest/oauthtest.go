// Package oauthtest is an OAuth 2.1 authorization server and a protected MCP
// resource for tests, on httptest, speaking the real wire formats: RFC 8414
// metadata, RFC 9728 protected-resource metadata, RFC 7591 registration, the
// authorization endpoint (approving at once, as a browser that clicked
// Allow), PKCE S256 verification, code exchange and refresh with rotation,
// client ID metadata documents (fetched from the client's URL), and a
// resource that moves to another authorization server (MoveResourcesTo),
// and DPoP (RFC 9449): proofs required at the token endpoint, tokens bound to
// the proof's key, server-supplied nonces, and a resource that takes only
// DPoP-bound tokens with a matching proof.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/dpop"
)

// Server is the authorization server.
type Server struct {
	*httptest.Server

	// AuthMethod is what registration grants: "none" (default),
	// "client_secret_basic" or "client_secret_post".
	AuthMethod string
	// TokenTTL of issued access tokens (default 1h).
	TokenTTL time.Duration
	// EmailDomain, when set, is returned by the token response and userinfo.
	EmailDomain string
	// NoUserinfo leaves userinfo_endpoint out of the metadata (as Notion's
	// authorization server does).
	NoUserinfo bool
	// UserinfoDomain, when set, is what userinfo answers instead of EmailDomain.
	UserinfoDomain string
	// Deny makes the authorization endpoint answer error=access_denied.
	Deny bool
	// ClientIDMetadataDocuments advertises client_id_metadata_document_supported:
	// an https (or loopback http) URL is then accepted as client_id, and the
	// server fetches that client's metadata document from it.
	ClientIDMetadataDocuments bool
	// DocumentClient fetches client ID metadata documents (default: a
	// client with a 5s timeout).
	DocumentClient *http.Client
	// DPoP advertises dpop_signing_alg_values_supported ["ES256"] and then
	// requires a valid proof with every token request: the tokens it issues
	// are DPoP-bound (token_type "DPoP") to the proof's key, refresh tokens
	// included, and its resources (Protect) take them only with a proof of
	// that key.
	DPoP bool
	// DPoPNonce makes the token endpoint answer a proof without the
	// server's current nonce with 400 use_dpop_nonce and a DPoP-Nonce header.
	DPoPNonce bool
	// DPoPResourceNonce makes the resources answer a proof without the
	// nonce with 401 and a DPoP error="use_dpop_nonce" challenge.
	DPoPResourceNonce bool
	// SendsIss advertises authorization_response_iss_parameter_supported and
	// puts iss in every authorization response (RFC 9207).
	SendsIss bool
	// OnCodeExchange, when set, runs at the start of every authorization
	// code exchange, before the code is checked: a test holds the exchange
	// there to fail a process while a login is being completed.
	OnCodeExchange func()

	bound   map[string]string // token (access or refresh) → jkt of its key
	jtis    map[string]bool   // proof ids seen (replay check)
	dpopErr []string          // every proof refused, with why

	mu          sync.Mutex
	clients     map[string]client
	codes       map[string]grant
	access      map[string]time.Time // token → expiry
	refresh     map[string]string    // refresh token → client id
	counts      map[string]int
	lastAuth    url.Values
	issued      []string // every access and refresh token handed out
	movedTo     *Server  // the authorization server this server's resources now name
	refreshSeen []string // every refresh token presented, valid or not
}

type client struct {
	secret, method, redirect string
}

type grant struct {
	clientID, challenge, redirect, resource string
}

// New starts the server; it is closed with the test.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{clients: map[string]client{}, codes: map[string]grant{}, access: map[string]time.Time{},
		refresh: map[string]string{}, counts: map[string]int{},
		bound: map[string]string{}, jtis: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("GET /userinfo", s.userinfo)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *Server) count(k string) {
	s.mu.Lock()
	s.counts[k]++
	s.mu.Unlock()
}

// Count returns how often an endpoint ("register", "authorize", "code",
// "refresh", "metadata", "userinfo", "document" for a client ID metadata
// document fetched) was used, or a DPoP event happened ("dpop-proof" for
// a proof accepted, "dpop-nonce-challenge", "dpop-resource" for a resource
// request let through, "dpop-unauthenticated", "dpop-unexpected" for a
// proof sent to a server without DPoP).
func (s *Server) Count(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[k]
}

// LastAuthorize returns the query of the last authorization request.
func (s *Server) LastAuthorize() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuth
}

// Valid reports whether an access token was issued and has not expired or been revoked.
func (s *Server) Valid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[token]
	return ok && time.Now().Before(exp)
}

// Issued returns every access and refresh token the server has handed out,
// for tests that check none of them surfaced anywhere.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// ExpireAccess makes every issued access token invalid (the resource answers 401).
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]time.Time{}
}

// RevokeGrants makes every refresh token answer invalid_grant.
func (s *Server) RevokeGrants() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh = map[string]string{}
	s.access = map[string]time.Time{}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

func random() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	s.count("metadata")
	md := map[string]any{
		"issuer":                                s.URL,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"registration_endpoint":                 s.URL + "/register",
		"userinfo_endpoint":                     s.URL + "/userinfo",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
	}
	if s.NoUserinfo {
		delete(md, "userinfo_endpoint")
	}
	if s.ClientIDMetadataDocuments {
		md["client_id_metadata_document_supported"] = true
	}
	if s.DPoP {
		md["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if s.SendsIss {
		md["authorization_response_iss_parameter_supported"] = true
	}
	writeJSON(w, 200, md)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	s.count("register")
	var in struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.RedirectURIs) != 1 {
		oauthError(w, 400, "invalid_client_metadata")
		return
	}
	method := s.AuthMethod
	if method == "" {
		method = "none"
	}
	c := client{method: method, redirect: in.RedirectURIs[0]}
	out := map[string]any{"client_id": "client-" + random(), "token_endpoint_auth_method": method,
		"redirect_uris": in.RedirectURIs}
	if method != "none" {
		c.secret = "secret-" + random()
		out["client_secret"] = c.secret
	}
	s.mu.Lock()
	s.clients[out["client_id"].(string)] = c
	s.mu.Unlock()
	writeJSON(w, 201, out)
}

// AddClient registers a client out of band, as an operator registers a web
// application in a provider's console (Google's, for Gmail). method is
// "none", "client_secret_basic" or "client_secret_post".
func (s *Server) AddClient(id, secret, method, redirect string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = client{secret: secret, method: method, redirect: redirect}
}

// authorize approves at once and redirects with a code, as a consenting browser would see.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	s.count("authorize")
	q := r.URL.Query()
	s.mu.Lock()
	s.lastAuth = q
	c, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if !ok && s.ClientIDMetadataDocuments {
		c, ok = s.document(r, q.Get("client_id"), q.Get("redirect_uri"))
	}
	if !ok || q.Get("redirect_uri") != c.redirect || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(c.redirect)
	v := back.Query()
	v.Set("state", q.Get("state"))
	if s.SendsIss {
		v.Set("iss", s.URL)
	}
	if s.Deny {
		v.Set("error", "access_denied")
	} else {
		code := "code-" + random()
		s.mu.Lock()
		s.codes[code] = grant{clientID: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: c.redirect, resource: q.Get("resource")}
		s.mu.Unlock()
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// clientAuth returns the authenticated client id following its registered method.
func (s *Server) clientAuth(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok && s.ClientIDMetadataDocuments {
		c, ok = s.document(r, id, r.PostForm.Get("redirect_uri"))
	}
	if !ok {
		return "", false
	}
	switch c.method {
	case "none":
		return id, secret == ""
	case "client_secret_basic":
		return id, basic && secret == c.secret
	default:
		return id, !basic && secret == c.secret
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request")
		return
	}
	id, ok := s.clientAuth(r)
	if !ok {
		oauthError(w, 401, "invalid_client")
		return
	}
	jkt := ""
	if !s.DPoP && r.Header.Get("DPoP") != "" {
		s.count("dpop-unexpected") // a client sent a proof to a server that never asked for one
	}
	if s.DPoP {
		c, ok := s.checkProof(w, r, s.URL+"/token", "", s.DPoPNonce, false)
		if !ok {
			return
		}
		jkt = c.JKT
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		s.count("code")
		if s.OnCodeExchange != nil {
			s.OnCodeExchange()
		}
		code := r.PostForm.Get("code")
		s.mu.Lock()
		g, ok := s.codes[code]
		delete(s.codes, code)
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.clientID != id || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, 400, "invalid_grant")
			return
		}
		s.issue(w, id, jkt)
	case "refresh_token":
		s.count("refresh")
		rt := r.PostForm.Get("refresh_token")
		s.mu.Lock()
		s.refreshSeen = append(s.refreshSeen, rt)
		owner, ok := s.refresh[rt]
		boundTo := s.bound[rt]
		if ok && boundTo == jkt {
			delete(s.refresh, rt) // rotation: a refresh token works once
		}
		s.mu.Unlock()
		if !ok || owner != id || boundTo != jkt {
			oauthError(w, 400, "invalid_grant") // a bound refresh token needs a proof of its key
			return
		}
		s.issue(w, id, jkt)
	default:
		oauthError(w, 400, "unsupported_grant_type")
	}
}

func (s *Server) issue(w http.ResponseWriter, clientID, jkt string) {
	ttl := s.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	at, rt := "at-"+random(), "rt-"+random()
	s.mu.Lock()
	s.access[at] = time.Now().Add(ttl)
	s.refresh[rt] = clientID
	s.issued = append(s.issued, at, rt)
	typ := "Bearer"
	if jkt != "" {
		s.bound[at], s.bound[rt], typ = jkt, jkt, "DPoP"
	}
	s.mu.Unlock()
	out := map[string]any{"access_token": at, "refresh_token": rt, "token_type": typ, "expires_in": int(ttl.Seconds())}
	if s.EmailDomain != "" {
		out["email_domain"] = s.EmailDomain
	}
	writeJSON(w, 200, out)
}

func (s *Server) userinfo(w http.ResponseWriter, r *http.Request) {
	s.count("userinfo")
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.Valid(tok) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		oauthError(w, 401, "invalid_token")
		return
	}
	out := map[string]any{"sub": "user-1"}
	if s.EmailDomain != "" {
		out["email_domain"] = s.EmailDomain
	}
	if s.UserinfoDomain != "" {
		out["email_domain"] = s.UserinfoDomain
	}
	writeJSON(w, 200, out)
}

// Protect wraps an MCP handler as a protected resource of this server: it
// serves RFC 9728 metadata at /.well-known/oauth-protected-resource{/path}
// and answers 401 with a resource_metadata challenge to requests without a
// valid token. valid defaults to s.Valid.
func (s *Server) Protect(t interface{ Cleanup(func()) }, mcpPath string, h http.Handler, valid func(string) bool) *httptest.Server {
	if valid == nil {
		valid = s.Valid
	}
	var rs *httptest.Server
	mux := http.NewServeMux()
	prm := "/.well-known/oauth-protected-resource" + mcpPath
	mux.HandleFunc("GET "+prm, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": rs.URL + mcpPath, "authorization_servers": []string{s.current().URL}})
	})
	check := func(tok string) bool {
		if as := s.current(); as != s {
			return as.Valid(tok) // moved: only the new server's tokens are accepted
		}
		return valid(tok)
	}
	if s.DPoP {
		mux.Handle(mcpPath, s.dpopOnly(h, check, func() string { return rs.URL }, func() string { return rs.URL + prm }))
	} else {
		mux.Handle(mcpPath, BearerOnly(h, check, func() string { return rs.URL + prm }))
	}
	rs = httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	return rs
}

// MoveResourcesTo makes every resource this server protects name other as
// its authorization server (RFC 9728 metadata) and accept only other's
// tokens, as an MCP server that moved to another authorization server.
func (s *Server) MoveResourcesTo(other *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.movedTo = other
}

func (s *Server) current() *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.movedTo != nil {
		return s.movedTo
	}
	return s
}

// RefreshTokensSeen returns every refresh token presented at the token
// endpoint, accepted or not.
func (s *Server) RefreshTokensSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refreshSeen...)
}

// document fetches the client ID metadata document a URL client id names
// and accepts the client when the document names itself by that URL and
// lists redirect among its redirect URIs, as the draft asks of a server. The
// client is public (token_endpoint_auth_method none).
func (s *Server) document(r *http.Request, id, redirect string) (client, bool) {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return client{}, false
	}
	s.count("document")
	hc := s.DocumentClient
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	// Fetching the URL the client names is what the draft asks of a server;
	// this one only runs in tests, against the tests' own servers.
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, id, nil) //nolint:gosec // G704: see above
	if err != nil {
		return client{}, false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req) //nolint:gosec // G704: see above
	if err != nil {
		return client{}, false
	}
	defer resp.Body.Close()
	var doc struct {
		ClientID                string   `json:"client_id"`
		RedirectURIs            []string `json:"redirect_uris"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 5<<10)).Decode(&doc) != nil ||
		doc.ClientID != id || doc.TokenEndpointAuthMethod != "none" || !slices.Contains(doc.RedirectURIs, redirect) {
		return client{}, false
	}
	return client{method: "none", redirect: redirect}, true
}

// BearerOnly lets through requests whose bearer token valid accepts and
// answers the others 401 with a WWW-Authenticate challenge naming metadata().
func BearerOnly(h http.Handler, valid func(string) bool, metadata func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !valid(tok) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s"`, metadata()))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// dpopNonce is the nonce the server and its resources ask for.
const dpopNonce = "nonce-7f3a"

// DPoPNonceValue is the nonce the server supplies (DPoPNonce, DPoPResourceNonce).
const DPoPNonceValue = dpopNonce

// checkProof verifies the request's DPoP proof for a request to htu: one
// DPoP header, a valid ES256 signature by the public key in its header,
// htm and htu of the request, a recent iat, an unseen jti, ath of token
// when one is presented, and the nonce when asked. A failure is answered
// (400 invalid_dpop_proof at the token endpoint, 401 at a resource; 400 or
// 401 use_dpop_nonce with DPoP-Nonce for a missing nonce).
func (s *Server) checkProof(w http.ResponseWriter, r *http.Request, htu, token string, nonce, resource bool) (dpop.Claims, bool) {
	refuse := func(why string) (dpop.Claims, bool) {
		s.mu.Lock()
		s.dpopErr = append(s.dpopErr, why)
		s.mu.Unlock()
		if resource {
			w.Header().Set("WWW-Authenticate", `DPoP error="invalid_dpop_proof", algs="ES256"`)
			oauthError(w, 401, "invalid_dpop_proof")
		} else {
			oauthError(w, 400, "invalid_dpop_proof")
		}
		return dpop.Claims{}, false
	}
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 {
		return refuse(fmt.Sprintf("%d DPoP headers", len(vals)))
	}
	c, err := dpop.Verify(vals[0])
	if err != nil {
		return refuse(err.Error())
	}
	if c.HTM != r.Method || c.HTU != htu {
		return refuse("htm or htu does not match the request")
	}
	if d := time.Since(time.Unix(c.IAT, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return refuse("iat outside the window")
	}
	if (token == "") != (c.ATH == "") || token != "" && c.ATH != dpop.AccessTokenHash(token) {
		return refuse("ath does not match the access token")
	}
	s.mu.Lock()
	replay := s.jtis[c.JTI]
	s.jtis[c.JTI] = true
	s.mu.Unlock()
	if replay {
		return refuse("jti replayed")
	}
	if nonce && c.Nonce != dpopNonce {
		s.count("dpop-nonce-challenge")
		w.Header().Set("DPoP-Nonce", dpopNonce)
		if resource {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`)
			oauthError(w, 401, "use_dpop_nonce")
		} else {
			oauthError(w, 400, "use_dpop_nonce")
		}
		return dpop.Claims{}, false
	}
	s.count("dpop-proof")
	return c, true
}

// DPoPRefusals returns why every refused DPoP proof was refused.
func (s *Server) DPoPRefusals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dpopErr...)
}

// BoundTo returns the JWK thumbprint a token is bound to ("" for none).
func (s *Server) BoundTo(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound[token]
}

// dpopOnly lets through requests authorised with "DPoP <token>" whose token
// valid accepts, with a proof of the key the token is bound to (and the
// nonce, with DPoPResourceNonce); others get a DPoP challenge.
func (s *Server) dpopOnly(h http.Handler, valid func(string) bool, base, metadata func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "DPoP") || !valid(tok) {
			s.count("dpop-unauthenticated")
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP algs="ES256", resource_metadata="%s"`, metadata()))
			oauthError(w, 401, "invalid_token")
			return
		}
		c, ok := s.checkProof(w, r, base()+r.URL.Path, tok, s.DPoPResourceNonce, true)
		if !ok {
			return
		}
		if c.JKT != s.BoundTo(tok) {
			w.Header().Set("WWW-Authenticate", `DPoP error="invalid_token"`)
			oauthError(w, 401, "invalid_token")
			return
		}
		s.count("dpop-resource")
		h.ServeHTTP(w, r)
	})
}
