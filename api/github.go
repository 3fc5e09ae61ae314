package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	ghacts "github.com/guilds/guilds/activities/githubinstall"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/githubinstall"
)

// The GitHub App's connect (docs/adr/1201-github-app.md): Connect answers the
// App's install URL, or user authorization when the organisation already has
// a GitHub login the operator can see; GitHub's callback comes back to the
// shared OAuth callback in one of two shapes, and the githubinstall workflow
// keeps an installation only when the user's token reaches it.

// GitHubPickerPath is where the operator chooses among several installations.
const GitHubPickerPath = "/api/mcp/oauth/github-installation"

// githubChooseStatus is a callback's answer when the user must pick an installation.
const githubChooseStatus = string(githubinstall.StatusChoose)

// githubStateCookie keeps the state for a callback that comes back without it.
const githubStateCookie = "guilds_github_state"

func (s *Server) githubRoutes() []route {
	return []route{
		{Method: "GET", Path: GitHubPickerPath, Tag: "connections", Public: true,
			Summary: "The GitHub installations the user who is connecting reaches, when there are several (the browser that started the login)",
			Reply:   githubPickerReply{}, Handle: s.githubPicker},
		{Method: "POST", Path: GitHubPickerPath, Tag: "connections", Public: true,
			Summary: "Choose the installation (by account) a GitHub login keeps, in the browser that started it",
			Body:    githubChoiceInput{}, Reply: mcpCallbackReply{}, Handle: s.githubChoose, NoTx: true, Timeout: RemoteTimeout},
		{Method: "GET", Path: "/api/mcp/connections/:id/github/repositories", Tag: "connections",
			Summary: "The repositories a GitHub login's installation reaches",
			Reply:   []githubRepository{}, Handle: s.githubRepositories, NoTx: true},
		{Method: "PUT", Path: "/api/mcp/connections/:id/github/selected", Tag: "connections",
			Summary: "Store the repositories a GitHub login works on; each must be one its installation reaches (a guild login mirrors them into the guild's repositories)",
			Body:    githubSelectInput{}, Reply: githubSelection{}, Handle: s.githubSelect, NoTx: true},
		{Method: "GET", Path: "/api/admin/github/approvals", Tag: "connections", Admin: true,
			Summary: "Requests to attach a GitHub installation that another organisation holds already, waiting ones first",
			Reply:   []githubapp.Approval{}, Handle: s.githubApprovals},
		{Method: "POST", Path: "/api/admin/github/approvals/:id/approve", Tag: "connections", Admin: true,
			Summary: "Let the request's organisation attach the installation (its login then connects again)",
			Reply:   githubapp.Approval{}, Handle: s.githubApprove},
		{Method: "GET", Path: "/api/guilds/:id/repositories", Tag: "connections",
			Summary: "A guild's repositories (extra git URLs and those its GitHub login selected) and the GitHub logins the operator can see",
			Reply:   guildRepositoriesReply{}, Handle: s.guildRepositories},
		{Method: "PUT", Path: "/api/guilds/:id/github/egress", Tag: "connections",
			Summary: "Turn the guild's coding agents' way to GitHub on or off (on by default); off, their generations get no GitHub token and no clone",
			Body:    guildEgressInput{}, Reply: guildEgressReply{}, Handle: setGuildEgress},
	}
}

// githubApp is the box's App; a missing variable is connections.ErrNotSetUp (422,
// setup_state unsupported), an unusable one names the variable.
func (s *Server) githubApp() (*githubapp.Client, error) {
	cfg, err := githubapp.FromRegistry(s.Integrations)
	var ns *githubapp.NotSetUpError
	switch {
	case errors.As(err, &ns):
		return nil, &connections.ErrNotSetUp{Server: "GitHub", Missing: ns.Missing}
	case err != nil:
		return nil, &Error{Status: http.StatusUnprocessableEntity, Code: "not_set_up", Message: "the GitHub App is not usable: " + err.Error()}
	}
	return &githubapp.Client{Config: cfg}, nil
}

// notSetUpReply is the error of a Connect the box is not set up for, with
// setup_state unsupported and the variables to set.
type notSetUpReply struct {
	Code             string   `json:"code"`
	Message          string   `json:"message"`
	SetupState       string   `json:"setup_state"`
	MissingVariables []string `json:"missing_variables"`
}

// notSetUpBody is the 422 body of such a Connect: the error every route
// answers, and setup_state beside it for clients that read only the top.
func notSetUpBody(err error) (gin.H, bool) {
	var ns *connections.ErrNotSetUp
	if !errors.As(err, &ns) {
		return nil, false
	}
	missing := ns.Missing
	if missing == nil {
		missing = []string{}
	}
	return gin.H{"error": notSetUpReply{Code: "not_set_up", Message: ns.Error(), SetupState: grants.SetupUnsupported, MissingVariables: missing},
		"setup_state": grants.SetupUnsupported}, true
}

// beginGitHub is the connect service's GitHub strategy as the API runs it.
func (s *Server) beginGitHub(ctx context.Context, c *gin.Context, conn connections.Connection, p access.Principal) (string, error) {
	app, err := s.githubApp()
	if err != nil {
		return "", err
	}
	if s.Temporal == nil {
		return "", &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the workflow service is not reachable"}
	}
	redirect, err := s.callbackURL(c)
	if err != nil {
		return "", err
	}
	nonce, err := s.bindOAuthStart(ctx, conn.ID, p.UserID)
	if err != nil {
		return "", err
	}
	state, err := githubapp.BeginPending(ctx, s.db(), conn.ID, redirect)
	if err != nil {
		return "", err
	}
	if err := githubinstall.Start(ctx, s.Temporal, s.taskQueue(), githubinstall.Input{ConnectionID: conn.ID, Deadline: s.MCP.OAuthDeadline}); err != nil {
		return "", err
	}
	s.setOAuthCookie(c, conn.ID, nonce)
	s.setGitHubState(c, state)
	reuse, err := s.orgHasGitHubLogin(ctx, p, conn)
	if err != nil {
		return "", err
	}
	if reuse {
		return app.AuthorizeURL(state, redirect), nil
	}
	return app.InstallURL(state), nil
}

// orgHasGitHubLogin reports whether the login's organisation has another
// connected GitHub login the operator can see: then the App is installed
// already and user authorization attaches it.
func (s *Server) orgHasGitHubLogin(ctx context.Context, p access.Principal, conn connections.Connection) (bool, error) {
	all, err := connections.ListConnections(ctx, s.db(), p, "", "")
	if err != nil {
		return false, err
	}
	for _, o := range all {
		if o.ID != conn.ID && o.ServerSlug == conn.ServerSlug && o.Status == connections.StatusConnected && o.Owner().OrgID == conn.Owner().OrgID {
			return true, nil
		}
	}
	return false, nil
}

func (s *Server) setGitHubState(c *gin.Context, state string) {
	//nolint:gosec // G124: Secure follows the scheme the API is served on (plain http only for local development); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: githubStateCookie, Value: state, Path: oauthCookiePath,
		MaxAge: int(githubapp.PendingTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.servedOverHTTPS(c)})
}

func (s *Server) clearGitHubState(c *gin.Context) {
	//nolint:gosec // G124: Secure follows the scheme the API is served on (plain http only for local development); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: githubStateCookie, Path: oauthCookiePath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.servedOverHTTPS(c)})
}

// githubPending finds the GitHub attempt of a callback's state (or the
// cookie's, when GitHub left the state out) and checks that this browser
// started it. ok is false when the state names no GitHub attempt.
func (s *Server) githubPending(ctx context.Context, c *gin.Context, db store.DB, state string) (githubapp.Pending, string, bool, error) {
	if state == "" {
		state, _ = c.Cookie(githubStateCookie)
	}
	if state == "" {
		return githubapp.Pending{}, "", false, nil
	}
	pend, err := githubapp.FindPending(ctx, db, state)
	if errors.Is(err, store.ErrNotFound) {
		return githubapp.Pending{}, state, false, nil
	}
	if err != nil {
		return githubapp.Pending{}, state, true, err
	}
	hash, user, err := githubapp.Starter(ctx, db, pend.ConnectionID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return pend, state, true, err
	}
	pl := pendingLogin{connectors.PendingOAuth{ConnectionID: pend.ConnectionID, BrowserHash: hash, StartedBy: user}}
	return pend, state, true, pl.checkBrowser(c)
}

// githubCallback handles GitHub's return to the OAuth callback; handled is
// false when the callback is not a GitHub one (the MCP path takes it).
func (s *Server) githubCallback(ctx context.Context, c *gin.Context, db store.DB) (handled bool, status int, body any, err error) {
	q := c.Request.URL.Query()
	githubShaped := q.Has("installation_id") || q.Has("setup_action")
	if !q.Has("state") && !q.Has("code") && !githubShaped {
		// Nothing of GitHub's: another login's callback that lost its state.
		return false, 0, nil, nil
	}
	pend, state, ok, err := s.githubPending(ctx, c, db, q.Get("state"))
	switch {
	case err != nil:
		return true, 0, nil, err
	case !ok && githubShaped:
		return true, 0, nil, errUnknownState
	case !ok:
		return false, 0, nil, nil
	}
	if s.MCP.Keyring == nil || s.Temporal == nil {
		return true, 0, nil, errUnknownState
	}
	var instID int64
	if v := q.Get("installation_id"); v != "" {
		if instID, err = strconv.ParseInt(v, 10, 64); err != nil || instID <= 0 {
			return true, 0, nil, invalidField("installation_id", "must be GitHub's numeric installation id")
		}
	}
	code := q.Get("code")
	var cb githubinstall.Callback
	switch {
	case q.Get("error") != "":
		cb.Error = oauthCode(q.Get("error"))
	case q.Get("setup_action") == "request":
		cb.Requested = true
	case code == "":
		// A setup redirect: user authorization with the same state. The id
		// it named is only a hint until a user token reaches it.
		if instID != 0 {
			if err := githubapp.SetHint(ctx, db, state, instID); err != nil {
				return true, 0, nil, err
			}
		}
		app, err := s.githubApp()
		if err != nil {
			return true, 0, nil, err
		}
		u := app.AuthorizeURL(state, pend.RedirectURI)
		c.Header("Location", u)
		return true, http.StatusFound, gin.H{"authorization_url": u}, nil
	default:
		cb.Sealed, err = ghacts.Seal(s.MCP.Keyring, pend.ConnectionID, ghacts.CallbackParams{State: state, Code: code, InstallationID: instID})
		if err != nil {
			return true, 0, nil, err
		}
	}
	st, body, err := s.githubStep(ctx, c, pend.ConnectionID, githubinstall.UpdateCallback, cb)
	return true, st, body, err
}

// githubStep hands a callback or choice to the login's workflow and
// answers what it led to.
func (s *Server) githubStep(ctx context.Context, c *gin.Context, connID, update string, cb githubinstall.Callback) (int, any, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	step, err := githubinstall.Send(ctx, s.Temporal, connID, update, cb)
	if errors.Is(err, githubinstall.ErrNoLogin) {
		return 0, nil, errUnknownState
	}
	if err != nil {
		return 0, nil, err
	}
	switch step.Status {
	case githubinstall.StatusChoose:
		return http.StatusOK, githubChooseReply{ConnectionID: connID, Status: string(step.Status), Choices: step.Choices, PickerURL: GitHubPickerPath}, nil
	case githubinstall.StatusRequested:
		s.clearGitHubState(c)
		return http.StatusAccepted, gin.H{"connection_id": connID, "status": string(step.Status), "message": step.Error}, nil
	case githubinstall.StatusNeedsApproval:
		s.clearGitHubState(c)
		return 0, nil, &Error{Status: http.StatusConflict, Code: "github_installation_needs_approval", Message: step.Error}
	case githubinstall.StatusConnected:
		s.clearGitHubState(c)
		s.clearOAuthCookie(c, connID)
		return http.StatusOK, mcpCallbackReply{ConnectionID: connID, Status: string(step.Status), AccountHint: step.Account}, nil
	}
	s.clearGitHubState(c)
	s.clearOAuthCookie(c, connID)
	return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "github_" + string(step.Status), Message: step.Error}
}

type githubChooseReply struct {
	ConnectionID string `json:"connection_id"`
	Status       string `json:"status"`
	Choices      int    `json:"choices"`
	PickerURL    string `json:"picker_url"`
}

type githubPickerReply struct {
	ConnectionID string          `json:"connection_id"`
	Accounts     []githubAccount `json:"accounts"`
	InstallURL   string          `json:"install_url"`
}

type githubAccount struct {
	Account string `json:"account"`
}

type githubChoiceInput struct {
	State   string `json:"state,omitempty"`
	Account string `json:"account"`
}

// githubPicker lists the accounts the user's token reached (never an
// installation id), and where to install the App on another one.
func (s *Server) githubPicker(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	pend, state, ok, err := s.githubPending(ctx, c, db, c.Query("state"))
	if err != nil {
		return 0, nil, err
	}
	if !ok || len(pend.Choices) == 0 {
		return 0, nil, errUnknownState
	}
	app, err := s.githubApp()
	if err != nil {
		return 0, nil, err
	}
	out := githubPickerReply{ConnectionID: pend.ConnectionID, InstallURL: app.InstallURL(state)}
	for _, ch := range pend.Choices {
		out.Accounts = append(out.Accounts, githubAccount{Account: ch.Account})
	}
	return http.StatusOK, out, nil
}

func (s *Server) githubChoose(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	var in githubChoiceInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Account == "" {
		return 0, nil, invalidField("account", "is required: one of the accounts GET "+GitHubPickerPath+" lists")
	}
	pend, state, ok, err := s.githubPending(ctx, c, db, in.State)
	if err != nil {
		return 0, nil, err
	}
	if !ok || len(pend.Choices) == 0 || s.MCP.Keyring == nil || s.Temporal == nil {
		return 0, nil, errUnknownState
	}
	sealed, err := ghacts.Seal(s.MCP.Keyring, pend.ConnectionID, ghacts.CallbackParams{State: state, Account: in.Account})
	if err != nil {
		return 0, nil, err
	}
	return s.githubStep(ctx, c, pend.ConnectionID, githubinstall.UpdateChoice, githubinstall.Callback{Sealed: sealed})
}
