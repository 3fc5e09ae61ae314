package githubapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/sandbox"
)

// ReposDir is where a generation clones the guild's repositories.
const ReposDir = "/home/agent/repos"

// RefreshWithin: a token this close to its expiry is replaced before a shell call.
const RefreshWithin = 10 * time.Minute

// Generations gives a coding agent's generation its GitHub repositories:
// installation tokens limited to them, written to the sandbox for the
// credential helper, and their clones under ReposDir. It remembers the
// tokens it issued, for the run's redaction set (RunSecrets).
type Generations struct {
	DB        store.DB
	App       func() (*Client, error)
	Workspace sandbox.Workspace
	// Helper is the credential helper's path in the sandbox ("":
	// gittokens.HelperPath; the local driver runs the host's build).
	Helper string
	// Keyring seals the issued tokens kept for every worker's redaction set.
	Keyring *secret.Keyring
	// Egress is the agents' way to GitHub from sandboxes without a network
	// (the worker's proxy); nil = the sandboxes have the host's network.
	Egress Egress
	// Relay is the proxy setting that names the sandbox's relay to Egress
	// ("" = gittokens.ProxyURL); a test names its own proxy.
	Relay string
	Log   *slog.Logger

	mu     sync.Mutex
	issued map[string][]issued    // by agent
	egress map[string]bool        // by agent: its generation goes through Egress
	grants map[string]egressGrant // by agent: the token Egress adds for it
}

type issued struct {
	token   string
	expires time.Time
}

// RefusedError: the generation cannot start; Message says why, naming the
// login or the repository (never a token or an installation id).
type RefusedError struct{ Message string }

func (e *RefusedError) Error() string { return e.Message }

// Agent names the agent a generation runs for and its chain.
type Agent struct{ ID, GuildID, OrgID string }

// Prepared is what a generation start did.
type Prepared struct {
	Repositories int
	ExpiresAt    time.Time // the earliest token's expiry; zero without tokens
}

// repo is one repository a generation works on.
type repo struct {
	name, url, branch string
	token             *gittokens.Token
}

// Prepare runs at a coding generation's start: the repositories the agent's
// chain selected get installation tokens limited to them by id (contents and
// pull requests write where the login's user can push, read elsewhere),
// renames GitHub reports are recorded, the
// tokens go to the sandbox, and every repository (with the guild's extra
// git URLs) is cloned, or updated when its clone exists.
func (g *Generations) Prepare(ctx context.Context, a Agent) (Prepared, error) {
	repos, file, err := g.tokens(ctx, a)
	if err != nil {
		return Prepared{}, err
	}
	extras, err := GuildRepositories(ctx, g.DB, a.GuildID)
	if err != nil {
		return Prepared{}, err
	}
	for _, x := range extras {
		if x.ConnectionID == "" && !slices.ContainsFunc(repos, func(r repo) bool { return r.name == x.Name }) {
			repos = append(repos, repo{name: x.Name, url: x.URL, branch: x.DefaultBranch})
		}
	}
	if g.Workspace == nil {
		if len(repos) == 0 {
			return Prepared{}, nil
		}
		return Prepared{}, fmt.Errorf("githubapp: the repositories are cloned into the agent's sandbox: %w", sandbox.ErrNoWorkspace)
	}
	if err := g.write(ctx, a.ID, file); err != nil {
		return Prepared{}, err
	}
	if file.Proxy != "" {
		g.startRelay(ctx, a.ID, file)
	}
	for _, r := range repos {
		if err := g.sync(ctx, a.ID, file, r); err != nil {
			return Prepared{}, err
		}
	}
	out := Prepared{Repositories: len(repos)}
	if gr, ok := g.liveGrant(a.ID); ok && file.Proxy != "" {
		out.ExpiresAt = gr.expires
	}
	for _, t := range file.Tokens {
		if out.ExpiresAt.IsZero() || t.ExpiresAt.Before(out.ExpiresAt) {
			out.ExpiresAt = t.ExpiresAt
		}
	}
	return out, nil
}

// Due reports whether the agent's latest token is within RefreshWithin of
// its expiry (a shell call then refreshes it first).
// An agent whose way to GitHub is the worker's proxy is due as well when the
// proxy holds no token for it (the worker restarted, or a run's end revoked it).
func (g *Generations) Due(agentID string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.egress[agentID] {
		gr, ok := g.grants[agentID]
		return !ok || time.Until(gr.expires) <= RefreshWithin
	}
	list := g.issued[agentID]
	return len(list) > 0 && time.Until(list[len(list)-1].expires) <= RefreshWithin
}

// Refresh replaces the agent's tokens when they are Due (before a shell
// call); it does nothing otherwise.
func (g *Generations) Refresh(ctx context.Context, a Agent) error {
	if !g.Due(a.ID) {
		return nil
	}
	_, file, err := g.tokens(ctx, a)
	if err != nil {
		return err
	}
	return g.write(ctx, a.ID, file)
}

// tokens requests the token of the agent's selection and answers its
// repositories and the file for the sandbox.
func (g *Generations) tokens(ctx context.Context, a Agent) ([]repo, gittokens.File, error) {
	helper := g.Helper
	if helper == "" {
		helper = gittokens.HelperPath
	}
	file := gittokens.File{Helper: helper, Tokens: []gittokens.Token{}}
	eff, err := EffectiveSelection(ctx, g.DB, a.OrgID, a.GuildID, a.ID)
	if err != nil || len(eff.Selected) == 0 {
		if err == nil {
			g.setEgress(a.ID, false)
		}
		return nil, file, err
	}
	if on, err := GuildEgress(ctx, g.DB, a.GuildID); err != nil || !on {
		if err == nil {
			g.setEgress(a.ID, false)
			g.dropGrant(a.ID)
		}
		return nil, file, err
	}
	if eff.Status != string(connstore.StatusConnected) {
		return nil, file, &RefusedError{Message: fmt.Sprintf("the GitHub login %s that this agent's repositories come through is %s: "+
			"connect GitHub again to work on them", eff.AccountHint, eff.Status)}
	}
	id, err := connstore.ParseID(eff.ConnectionID)
	if err != nil {
		return nil, file, err
	}
	login, err := GetLogin(ctx, g.DB, eff.ConnectionID)
	if err != nil {
		return nil, file, err
	}
	app, err := g.App()
	if err != nil {
		return nil, file, &RefusedError{Message: "the guild's GitHub repositories need the box's GitHub App: " + err.Error()}
	}
	file.Hosts = []string{app.WebURL}
	if g.Egress != nil {
		sock, err := g.Egress.OpenGitHub(a.ID)
		if err != nil {
			return nil, file, fmt.Errorf("github: open the agent's way to GitHub: %w", err)
		}
		if sock != "" {
			file.Proxy, file.ProxySocket = gittokens.ProxyURL, sock
			if g.Relay != "" {
				file.Proxy = g.Relay
			}
		}
		g.setEgress(a.ID, sock != "")
	}
	groups, err := g.byPermission(ctx, eff.ConnectionID, login)
	if err != nil {
		return nil, file, err
	}
	var repos []repo
	var granted []AccessToken
	for _, grp := range groups {
		tok, err := app.AccessToken(ctx, login.InstallationID, grp.request())
		switch {
		case Gone(err):
			if derr := connstore.SetDisconnected(context.WithoutCancel(ctx), g.DB, id); derr != nil {
				g.log().Error("github: cannot mark a removed installation's login disconnected", "connection", eff.ConnectionID, "err", derr)
			}
			return nil, file, &RefusedError{Message: fmt.Sprintf("GitHub no longer reaches the installation of %s (the App was removed or suspended): "+
				"its login is now disconnected; connect GitHub again to work on its repositories", login.Account)}
		case err != nil:
			return nil, file, g.unreachable(ctx, app, login, err)
		}
		if err := g.remember(ctx, a.ID, tok); err != nil {
			return nil, file, err
		}
		granted = append(granted, tok)
		for _, r := range tok.Repositories {
			if err := g.track(ctx, eff.ConnectionID, login, r); err != nil {
				return nil, file, err
			}
			clone := r.CloneURL
			if clone == "" {
				clone = r.HTMLURL + ".git"
			}
			if file.Proxy != "" {
				// The proxy adds the token; the sandbox gets none.
				repos = append(repos, repo{name: r.Name, url: clone, branch: r.DefaultBranch})
				continue
			}
			t := gittokens.Token{Origin: origin(r.HTMLURL, app.WebURL), Path: r.FullName, Dir: path.Join(ReposDir, r.Name),
				Token: tok.Token, ExpiresAt: tok.ExpiresAt}
			file.Tokens = append(file.Tokens, t)
			repos = append(repos, repo{name: r.Name, url: clone, branch: r.DefaultBranch, token: &t})
		}
	}
	if file.Proxy != "" {
		if err := g.grantEgress(a.ID, app, granted); err != nil {
			return nil, file, err
		}
	}
	return repos, file, nil
}

// tokenGroup is the selected repositories one token covers, with the
// permissions it asks for.
type tokenGroup struct {
	perms    map[string]string
	selected []Selected
}

func (tg tokenGroup) request() TokenRequest {
	tr := TokenRequest{Permissions: tg.perms}
	for _, s := range tg.selected {
		if s.GitHubID != 0 {
			tr.RepositoryIDs = append(tr.RepositoryIDs, s.GitHubID)
		} else {
			tr.Repositories = append(tr.Repositories, s.Name)
		}
	}
	return tr
}

// byPermission splits a login's selection by what its user may do, as
// recorded at the connect: one token writes to the repositories the user
// can push to, another only reads the others. A record that expired, or a
// selected repository the user no longer reaches, refuses the generation:
// reaching the installation is not authority over its repositories.
func (g *Generations) byPermission(ctx context.Context, connectionID string, login Login) ([]tokenGroup, error) {
	acc, err := CurrentAccess(ctx, g.DB, connectionID, time.Now())
	if errors.Is(err, ErrAccessExpired) {
		return nil, &RefusedError{Message: fmt.Sprintf("what the GitHub user of the login %s can reach was checked too long ago (or never): "+
			"connect GitHub again to work on its repositories", login.Account)}
	}
	if err != nil {
		return nil, err
	}
	write := tokenGroup{perms: CodingPermissions}
	read := tokenGroup{perms: ReadPermissions}
	for _, s := range login.Selected {
		ra, ok := acc.find(s)
		if !ok {
			name := s.FullName
			if name == "" {
				name = s.Name
			}
			return nil, &RefusedError{Message: fmt.Sprintf("the GitHub user who connected the login %s does not reach %s: "+
				"take it out of the login's repositories, or connect GitHub again as a user who reaches it", login.Account, name)}
		}
		if ra.Permission == PermWrite {
			write.selected = append(write.selected, s)
		} else {
			read.selected = append(read.selected, s)
		}
	}
	var out []tokenGroup
	for _, tg := range []tokenGroup{write, read} {
		if len(tg.selected) > 0 {
			out = append(out, tg)
		}
	}
	return out, nil
}

// unreachable turns a refused token request into the repository the
// installation no longer reaches, when GitHub's own listing shows one.
func (g *Generations) unreachable(ctx context.Context, app *Client, login Login, cause error) error {
	reach, err := app.Repositories(ctx, login.InstallationID)
	if err != nil {
		return fmt.Errorf("github: installation token of %s: %w", login.Account, cause)
	}
	for _, s := range login.Selected {
		if !slices.ContainsFunc(reach, func(r Repository) bool { return r.ID == s.GitHubID || (s.GitHubID == 0 && r.Name == s.Name) }) {
			name := s.FullName
			if name == "" {
				name = s.Name
			}
			return &RefusedError{Message: fmt.Sprintf("the GitHub installation of %s no longer reaches %s: "+
				"give the App access to it again or take it out of the login's repositories", login.Account, name)}
		}
	}
	return fmt.Errorf("github: installation token of %s: %w", login.Account, cause)
}

// track records what GitHub's answer says a selected repository is now:
// its id for one stored by name, its URL after a rename.
func (g *Generations) track(ctx context.Context, connectionID string, login Login, r Repository) error {
	for _, s := range login.Selected {
		switch {
		case s.GitHubID == r.ID && (s.URL != r.HTMLURL || s.Name != r.Name):
			g.log().Info("github: a repository was renamed; its URL follows", "connection", connectionID, "github_id", r.ID)
			return SetRepositoryURL(ctx, g.DB, r.ID, r.Name, r.HTMLURL)
		case s.GitHubID == 0 && s.Name == r.Name:
			return adoptID(ctx, g.DB, connectionID, s.Name, r)
		}
	}
	return nil
}

// adoptID stores GitHub's id for a repository selected by name only.
func adoptID(ctx context.Context, db store.DB, connectionID, name string, r Repository) error {
	if _, err := db.Exec(ctx, `UPDATE guild_repositories SET github_id = $3, url = $4, updated_at = now()
WHERE connection_id = $1 AND name = $2 AND github_id IS NULL`, connectionID, name, r.ID, r.HTMLURL); err != nil {
		return store.Map(err)
	}
	_, err := db.Exec(ctx, `UPDATE github_logins SET selected = (
    SELECT jsonb_agg(CASE WHEN coalesce((e->>'github_id')::bigint, 0) = 0 AND e->>'name' = $2
        THEN e || jsonb_build_object('github_id', $3::bigint, 'url', $4::text, 'full_name', $5::text) ELSE e END)
    FROM jsonb_array_elements(selected) e), updated_at = now()
WHERE connection_id = $1`, connectionID, name, r.ID, r.HTMLURL, r.FullName)
	return store.Map(err)
}

func origin(u, fallback string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return fallback
	}
	return p.Scheme + "://" + p.Host
}

// write hands the tokens to the sandbox through its file API.
func (g *Generations) write(ctx context.Context, agentID string, f gittokens.File) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return g.Workspace.CopyTo(ctx, agentID, gittokens.Path, b, 0o600)
}

// startRelay makes sure the sandbox's relay to the worker's GitHub proxy
// runs before git does (the credential helper's relay mode). A failure is
// logged: the clones then say they cannot connect, and the next shell call
// starts the relay again.
func (g *Generations) startRelay(ctx context.Context, agentID string, f gittokens.File) {
	res, err := g.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: []string{f.Helper, gittokens.RelayArg}, Timeout: time.Minute, Dir: sandbox.HomeDir})
	switch {
	case err != nil:
		g.log().Warn("github: cannot start the sandbox's relay to GitHub", "agent", agentID, "err", err)
	case res.ExitCode != 0:
		g.log().Warn("github: the sandbox's relay to GitHub did not start", "agent", agentID, "exit_code", res.ExitCode,
			"stderr", clip(strings.TrimSpace(string(res.Stderr)), 300))
	}
}

// sync clones a repository under ReposDir, or updates its clone (fast
// forward only; a clone with local work is left as it is).
func (g *Generations) sync(ctx context.Context, agentID string, f gittokens.File, r repo) error {
	env := map[string]string{"GIT_TERMINAL_PROMPT": "0"}
	for _, kv := range append(f.GitConfigEnv(), f.ProxyEnv()...) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	dir := path.Join(ReposDir, r.name)
	probe, err := g.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: []string{"test", "-d", "repos/" + r.name + "/.git"}, Dir: sandbox.HomeDir})
	if err != nil {
		return err
	}
	req := sandbox.ExecRequest{Env: env, Timeout: 10 * time.Minute, Dir: sandbox.HomeDir,
		Cmd: []string{"git", "clone", "--quiet", r.url, "repos/" + r.name}}
	if probe.ExitCode == 0 {
		req.Dir, req.Cmd = dir, []string{"git", "pull", "--quiet", "--ff-only"}
	}
	res, err := g.Workspace.Exec(ctx, agentID, req)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if r.token != nil {
			msg = strings.ReplaceAll(msg, r.token.Token, "[redacted]")
		}
		// Not the generation's end: the agent can still clone itself (and sees
		// why it cannot), and a clone with local work is left as it is.
		what := "cloned"
		if probe.ExitCode == 0 {
			what = "updated"
		}
		g.log().Warn("github: a repository could not be "+what+" at generation start", "repository", r.name,
			"dir", dir, "exit_code", res.ExitCode, "stderr", clip(msg, 300))
	}
	return nil
}

func (g *Generations) log() *slog.Logger {
	if g.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Log
}
