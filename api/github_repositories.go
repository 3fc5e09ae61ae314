package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

type githubRepository struct {
	GitHubID      int64  `json:"github_id"`
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	Owner         string `json:"owner"`
	Private       bool   `json:"private"`
	DefaultBranch string `json:"default_branch"`
	URL           string `json:"url"`
	// Permission is what the login's user may do there: write where they
	// can push, read otherwise; a coding run's token asks for no more.
	Permission string `json:"permission"`
}

type githubSelectInput struct {
	Repositories []githubSelectRepo `json:"repositories"`
}

type githubSelectRepo struct {
	Name          string `json:"name"`
	URL           string `json:"url"`
	DefaultBranch string `json:"default_branch,omitempty"`
}

type githubSelection struct {
	ConnectionID string               `json:"connection_id"`
	Repositories []githubapp.Selected `json:"repositories"`
}

type guildRepositoriesReply struct {
	Repositories []githubapp.GuildRepository `json:"repositories"`
	GitHubLogins []guildGitHubLogin          `json:"github_logins"`
	// GitHubEgress: the guild's coding agents reach GitHub (PUT …/github/egress).
	GitHubEgress bool `json:"github_egress"`
}

type guildGitHubLogin struct {
	ConnectionID string               `json:"connection_id"`
	OwnerScope   string               `json:"owner_scope"`
	Status       string               `json:"status"`
	AccountHint  string               `json:"account_hint"`
	Repositories []githubapp.Selected `json:"repositories"`
	// Inherited: this guild works on the wider login's selection.
	Inherited bool `json:"inherited"`
}

// githubLogin is a connected GitHub login the principal can see, with its
// installation.
func (s *Server) githubLogin(ctx context.Context, db store.DB, p access.Principal, id string) (connections.Connection, githubapp.Login, error) {
	conn, err := connections.GetConnection(ctx, db, p, id)
	if err != nil {
		return conn, githubapp.Login{}, err
	}
	srv, err := grants.LoadServerRoute(ctx, db, conn.ServerID)
	if err != nil {
		return conn, githubapp.Login{}, err
	}
	if srv.Kind != catalog.KindGitHub {
		return conn, githubapp.Login{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_github", Message: conn.ServerSlug + " is not the GitHub connector"}
	}
	l, err := githubapp.GetLogin(ctx, db, conn.ID)
	if errors.Is(err, store.ErrNotFound) || conn.Status != connections.StatusConnected {
		return conn, l, &Error{Status: http.StatusConflict, Code: "not_connected", Message: "the login is " + string(conn.Status) + "; connect it first"}
	}
	return conn, l, err
}

// reachable lists what the login may work on: the repositories the
// installation reaches that its user reached at the connect, with the
// user's permission. A removed or suspended installation disconnects the
// login; a record of the user's reach that expired asks to connect again.
func (s *Server) reachable(ctx context.Context, conn connections.Connection, l githubapp.Login) ([]githubRepository, error) {
	acc, err := githubapp.CurrentAccess(ctx, s.db(), conn.ID, time.Now())
	if errors.Is(err, githubapp.ErrAccessExpired) {
		return nil, &Error{Status: http.StatusConflict, Code: "github_access_expired", Message: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	app, err := s.githubApp()
	if err != nil {
		return nil, err
	}
	repos, err := app.Repositories(ctx, l.InstallationID)
	if githubapp.Gone(err) {
		if derr := s.markInstallationGone(context.WithoutCancel(ctx), conn.ID); derr != nil {
			s.Log.Error("github: cannot mark a removed installation's login disconnected", "connection", conn.ID, "err", derr)
		}
		return nil, &Error{Status: http.StatusConflict, Code: "connection_disconnected",
			Message: "GitHub no longer reaches this login's installation (removed or suspended): the login is disconnected; connect it again"}
	}
	if err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Code: "github_unavailable", Message: "GitHub could not list the repositories: " + err.Error()}
	}
	out := []githubRepository{}
	for _, r := range repos {
		if ra, ok := acc.Repos[r.ID]; ok {
			out = append(out, githubRepository{GitHubID: r.ID, Name: r.Name, FullName: r.FullName, Owner: r.Owner.Login, Private: r.Private,
				DefaultBranch: r.DefaultBranch, URL: r.HTMLURL, Permission: ra.Permission})
		}
	}
	return out, nil
}

func (s *Server) githubRepositories(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, l, err := s.githubLogin(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	repos, err := s.reachable(ctx, conn, l)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, repos, nil
}

// githubSelect stores a login's selection, each repository matched to one
// the login may work on (by URL, else full name); any other refuses the
// whole selection and nothing is stored.
func (s *Server) githubSelect(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in githubSelectInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Repositories == nil {
		return 0, nil, invalidField("repositories", "is required (an empty list clears the selection)")
	}
	conn, l, err := s.githubLogin(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	repos, err := s.reachable(ctx, conn, l)
	if err != nil {
		return 0, nil, err
	}
	var probs validation.Problems
	sel := []githubapp.Selected{}
	seen := map[int64]bool{}
	for i, want := range in.Repositories {
		field := fmt.Sprintf("repositories[%d]", i)
		var found *githubRepository
		for j := range repos {
			if githubapp.SameRepository(want.URL, githubapp.Repository{HTMLURL: repos[j].URL, CloneURL: repos[j].URL + ".git"}) ||
				(want.URL == "" && want.Name != "" && want.Name == repos[j].FullName) {
				found = &repos[j]
				break
			}
		}
		if found == nil {
			probs.Add(field+".url", "is not a repository this login may work on: its installation and its GitHub user must both reach it "+
				"(GET /api/mcp/connections/%s/github/repositories lists them)", conn.ID)
			continue
		}
		if seen[found.GitHubID] {
			continue
		}
		seen[found.GitHubID] = true
		branch := want.DefaultBranch
		if branch == "" {
			branch = found.DefaultBranch
		}
		sel = append(sel, githubapp.Selected{GitHubID: found.GitHubID, Name: found.Name, FullName: found.FullName, URL: found.URL, DefaultBranch: branch})
	}
	if err := probs.Err(); err != nil {
		return 0, nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := githubapp.SetSelected(ctx, tx, conn.ID, sel); err != nil {
			return err
		}
		if conn.OwnerScope == grants.ScopeGuild {
			return githubapp.MirrorSelection(ctx, tx, conn.OwnerID, conn.ID, sel)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, githubSelection{ConnectionID: conn.ID, Repositories: sel}, nil
}

// guildRepositories lists a guild's repositories and the GitHub logins of
// its chain (organisation, guild) the operator can see, with the selection
// each carries or the guild inherits.
func (s *Server) guildRepositories(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	pl, err := grants.LoadPlace(ctx, db, grants.ScopeGuild, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if !p.CanSeeOrg(pl.OrgID) {
		return 0, nil, store.ErrNotFound
	}
	repos, err := githubapp.GuildRepositories(ctx, db, pl.GuildID)
	if err != nil {
		return 0, nil, err
	}
	chain, err := githubapp.LoginsOfChain(ctx, db, pl.OrgID, pl.GuildID, "")
	if err != nil {
		return 0, nil, err
	}
	eff, err := githubapp.EffectiveSelection(ctx, db, pl.OrgID, pl.GuildID, "")
	if err != nil {
		return 0, nil, err
	}
	egress, err := githubapp.GuildEgress(ctx, db, pl.GuildID)
	if err != nil {
		return 0, nil, err
	}
	out := guildRepositoriesReply{Repositories: repos, GitHubLogins: []guildGitHubLogin{}, GitHubEgress: egress}
	for _, cl := range chain {
		g := guildGitHubLogin{ConnectionID: cl.ConnectionID, OwnerScope: cl.OwnerScope, Status: cl.Status, AccountHint: cl.AccountHint,
			Repositories: []githubapp.Selected{}}
		if l, err := githubapp.GetLogin(ctx, db, cl.ConnectionID); err == nil && l.Selected != nil {
			g.Repositories = l.Selected
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return 0, nil, err
		}
		g.Inherited = eff.ConnectionID == cl.ConnectionID && cl.OwnerScope != string(grants.ScopeGuild)
		out.GitHubLogins = append(out.GitHubLogins, g)
	}
	return http.StatusOK, out, nil
}

// markInstallationGone marks a login whose GitHub installation is gone
// disconnected, with its audit event, in one transaction.
func (s *Server) markInstallationGone(ctx context.Context, connectionID string) error {
	return s.db().InTx(ctx, func(tx pgx.Tx) error {
		if err := connections.MarkDisconnected(ctx, tx, connectionID); err != nil {
			return err
		}
		return audit.RecordLogin(ctx, tx, connectionID, audit.ActionDisconnect, "installation_gone", audit.ActorPlatform)
	})
}
