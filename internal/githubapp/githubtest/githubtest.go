// Package githubtest is a local GitHub for tests: the REST calls the box's
// GitHub App makes, in GitHub's wire format (App JWTs verified with the App's
// public key, installations, /user/installations, installation access tokens
// limited by repository ids and permissions, /installation/repositories,
// renames, removal and suspension), the OAuth code exchange and user
// authorization, and real git repositories over smart HTTP (git http-backend)
// that take an installation token as the Basic password.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp"
)

// Server is the fake GitHub. Its web host is URL; its REST API is URL+"/api".
type Server struct {
	*httptest.Server
	AppID        int64
	Slug         string
	ClientID     string
	ClientSecret string
	Key          *rsa.PrivateKey
	KeyPEM       string // PKCS#1, as GitHub hands it out
	// TokenLife is how long an installation token lives (an hour, as GitHub).
	TokenLife time.Duration

	gitRoot string
	mu      sync.Mutex
	nextID  int64
	insts   map[int64]*installation
	repos   map[int64]*repo
	users   map[string]*user // by login
	codes   map[string]string
	utoks   map[string]string // user token → login
	itoks   map[string]*instToken
	// BrowserUser is who /login/oauth/authorize and the install page answer for.
	BrowserUser string
	// CallbackURL and Installing: the install page (/apps/<slug>/installations/new)
	// installs on the installation Installing and sends the browser to
	// CallbackURL with a code, the installation id and the state, as an App
	// that requests user authorization during installation does.
	CallbackURL string
	Installing  int64
	// InstallWithoutCode: the install page comes back without a code, as
	// GitHub's setup redirect does when it skips user authorization.
	InstallWithoutCode bool
	// OnlyRequest: the browser's user may not install on the account, only
	// ask its owners: the install page comes back with setup_action=request.
	OnlyRequest bool
	// Permissions and Events are the App's registration as GET /app
	// answers it (the box's needs and no webhook events, unless a test changes them).
	Permissions map[string]string
	Events      []string
	// TokenRequests records every access token request's body, in order.
	TokenRequests []TokenCall
	// Revoked lists the installation tokens revoked (DELETE /installation/token), in order.
	Revoked []string
	// RepoAPICalls records the Authorization of each call under /api/repos/.
	RepoAPICalls []string
}

// TokenCall is one access token request.
type TokenCall struct {
	Installation int64
	Request      githubapp.TokenRequest
}

type installation struct {
	id        int64
	account   string
	removed   bool
	suspended bool
}

type repo struct {
	id      int64
	inst    int64
	owner   string
	name    string
	private bool
	dir     string
}

type user struct {
	login string
	insts []int64
	// roles: repository id → admin, maintain, push, triage or pull. nil:
	// admin on every repository of insts (an owner of the accounts).
	roles map[int64]string
}

type instToken struct {
	inst    int64
	repos   map[int64]bool // nil: every repository of the installation
	expires time.Time
}

// Option changes how New serves.
type Option func(*options)

type options struct{ listen, advertise string }

// Listen serves on addr (host:port, "0.0.0.0:0" for every interface) under
// the URL http://advertise:<port>, for a client that reaches this machine by
// another address than loopback (a sandbox with a network).
func Listen(addr, advertise string) Option {
	return func(o *options) { o.listen, o.advertise = addr, advertise }
}

// New starts a fake GitHub with a fresh App key; it stops with the test.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{AppID: 4242, Slug: "guilds-test", ClientID: "Iv1.testclient", ClientSecret: "test-client-secret-" + randHex(8),
		Key: key, TokenLife: time.Hour, gitRoot: t.TempDir(), nextID: 1000,
		insts: map[int64]*installation{}, repos: map[int64]*repo{}, users: map[string]*user{},
		codes: map[string]string{}, utoks: map[string]string{}, itoks: map[string]*instToken{}}
	s.Permissions = map[string]string{}
	for k, v := range appPermissions {
		s.Permissions[k] = v
	}
	s.KeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	if o.listen == "" {
		s.Server = httptest.NewServer(s.handler())
	} else {
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			t.Fatal(err)
		}
		s.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}}
		s.Start()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		s.URL = "http://" + net.JoinHostPort(o.advertise, port)
	}
	t.Cleanup(s.Close)
	return s
}

// APIURL is the REST API's base URL.
func (s *Server) APIURL() string { return s.URL + "/api" }

// Env is the box's environment for this App and this fake (the App's
// variables, the key with \n escapes, and the base URLs).
func (s *Server) Env() map[string]string {
	return map[string]string{
		githubapp.VarAppID: strconv.FormatInt(s.AppID, 10), githubapp.VarSlug: s.Slug,
		githubapp.VarPrivateKey: strings.ReplaceAll(s.KeyPEM, "\n", `\n`),
		githubapp.VarClientID:   s.ClientID, githubapp.VarClientSecret: s.ClientSecret,
		githubapp.EnvAPIURL: s.APIURL(), githubapp.EnvWebURL: s.URL,
	}
}

// Getenv reads Env, for integrations.New and githubapp.FromRegistry.
func (s *Server) Getenv(name string) string { return s.Env()[name] }

// Config is the App as a box configured for this fake holds it.
func (s *Server) Config() githubapp.Config {
	return githubapp.Config{AppID: s.AppID, Slug: s.Slug, Key: s.Key, ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		APIURL: s.APIURL(), WebURL: s.URL}
}

func (s *Server) id() int64 { s.nextID++; return s.nextID }

// AddInstallation installs the App on an account and answers its id.
func (s *Server) AddInstallation(account string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id()
	s.insts[id] = &installation{id: id, account: account}
	return id
}

// AddUser makes a GitHub user who can reach installations.
func (s *Server) AddUser(login string, installations ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[login] = &user{login: login, insts: installations}
}

// Grant gives a user a role (admin, maintain, push, triage, pull) on one
// repository, as an organisation gives an outside collaborator: from then
// on the user reaches only the repositories granted, and the repository's
// installation shows in /user/installations.
func (s *Server) Grant(login string, repoID int64, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users[login]
	if u == nil {
		u = &user{login: login}
		s.users[login] = u
	}
	if u.roles == nil {
		u.roles = map[int64]string{}
	}
	u.roles[repoID] = role
	if rp := s.repos[repoID]; rp != nil && !slices.Contains(u.insts, rp.inst) {
		u.insts = append(u.insts, rp.inst)
	}
}

// Code is a one-time authorization code for a user, as user authorization
// hands it to the callback.
func (s *Server) Code(login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := randHex(10)
	s.codes[c] = login
	return c
}

// Remove uninstalls an installation: its tokens are refused with 404.
func (s *Server) Remove(installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[installationID]; in != nil {
		in.removed = true
	}
}

// Suspend suspends an installation: its tokens are refused with 403.
func (s *Server) Suspend(installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[installationID]; in != nil {
		in.suspended = true
	}
}

// ExpireTokens makes every issued installation token expire now.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.itoks {
		t.expires = time.Now().Add(-time.Second)
	}
}

// RevokedTokens lists the installation tokens revoked so far, in order.
func (s *Server) RevokedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Revoked...)
}

// IssuedTokens lists every installation token issued so far.
func (s *Server) IssuedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.itoks))
	for k := range s.itoks {
		out = append(out, k)
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/oauth/access_token", s.exchange)
	mux.HandleFunc("GET /login/oauth/authorize", s.authorize)
	mux.HandleFunc("GET /apps/{slug}/installations/new", s.install)
	mux.HandleFunc("GET /api/app", s.app)
	mux.HandleFunc("GET /api/app/installations", s.appInstallations)
	mux.HandleFunc("GET /api/app/installations/{id}", s.appInstallation)
	mux.HandleFunc("POST /api/app/installations/{id}/access_tokens", s.accessToken)
	mux.HandleFunc("GET /api/installation/repositories", s.installationRepositories)
	mux.HandleFunc("DELETE /api/installation/token", s.revokeToken)
	mux.HandleFunc("/api/repos/{owner}/{repo}/{rest...}", s.repoAPI)
	mux.HandleFunc("GET /api/user/installations", s.userInstallations)
	mux.HandleFunc("GET /api/user/installations/{id}/repositories", s.userInstallationRepositories)
	mux.HandleFunc("/{owner}/{repo}/", s.git)
	return mux
}
