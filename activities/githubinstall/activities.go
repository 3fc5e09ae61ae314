// Package githubinstall holds the activities of the GitHub App connect
// workflow (workflows/githubinstall). They open the sealed callback, talk to
// GitHub and store the installation themselves, so only ids, an account
// login and sealed parameters cross into the workflow's history; the user
// token lives inside Authorize and is discarded there.
package githubinstall

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// Activities are the workflow's activities with their dependencies.
type Activities struct {
	DB      *pgxpool.Pool
	Keyring *secret.Keyring
	// App answers the box's App client (githubapp.FromRegistry); an error
	// means the box cannot connect GitHub logins now.
	App func() (*githubapp.Client, error)
	Log *slog.Logger
}

// CallbackParams are what GitHub sent the browser back with; the API seals
// them (bound to the connection id) before they reach the workflow.
type CallbackParams struct {
	State          string `json:"state"`
	Code           string `json:"code,omitempty"`
	InstallationID int64  `json:"installation_id,omitempty"`
	// Account is the picker's choice.
	Account string `json:"account,omitempty"`
}

func aad(connectionID string) []byte { return []byte("github-callback:" + connectionID) }

// Seal encrypts callback parameters for the workflow.
func Seal(kr *secret.Keyring, connectionID string, p CallbackParams) ([]byte, error) {
	b, _ := json.Marshal(p)
	return kr.Seal(b, aad(connectionID))
}

func (a *Activities) open(connectionID string, sealed []byte) (CallbackParams, error) {
	var p CallbackParams
	plain, err := a.Keyring.Open(sealed, aad(connectionID))
	if err == nil {
		err = json.Unmarshal(plain, &p)
	}
	if err != nil {
		return p, temporal.NewNonRetryableApplicationError("the callback cannot be opened", ErrTypeInternal, nil)
	}
	return p, nil
}

// Input is one sealed callback (or choice) of a login.
type Input struct {
	ConnectionID string
	Sealed       []byte
}

// Authorized is what the callback decided: the installation is kept
// (Account), or the user reaches several and the picker must choose (Choices).
type Authorized struct {
	Account string
	Choices int
}

func refused(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeRefused, nil)
}

// Authorize exchanges the callback's code for a user token, lists the App's
// installations that user reaches and, in each, the repositories the user
// reaches with their permission, and keeps one installation only when the
// user reaches it: the callback's id (or the setup redirect's) when there is
// one, else the only installation there is; several are left to the picker.
// An id the user cannot reach is refused: an id in the URL alone proves
// nothing. It runs once: the code is single use.
func (a *Activities) Authorize(ctx context.Context, in Input) (Authorized, error) {
	p, err := a.open(in.ConnectionID, in.Sealed)
	if err != nil {
		return Authorized{}, err
	}
	pend, err := githubapp.FindPending(ctx, a.DB, p.State)
	if errors.Is(err, store.ErrNotFound) || (err == nil && pend.ConnectionID != in.ConnectionID) {
		return Authorized{}, refused("unknown or expired login")
	}
	if err != nil {
		return Authorized{}, err
	}
	app, err := a.App()
	if err != nil {
		return Authorized{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSetup, nil)
	}
	reached, err := reachable(ctx, app, p.Code, pend.RedirectURI)
	if err != nil {
		return Authorized{}, err
	}
	want := p.InstallationID
	if want == 0 {
		want = pend.InstallationHint
	}
	var keep *githubapp.Choice
	switch {
	case want != 0:
		i := slices.IndexFunc(reached, func(x githubapp.Choice) bool { return x.InstallationID == want })
		if i < 0 {
			return Authorized{}, refused("the installation GitHub named is not one your GitHub user can reach; nothing was stored")
		}
		keep = &reached[i]
	case len(reached) == 1:
		keep = &reached[0]
	case len(reached) == 0:
		return Authorized{}, refused("your GitHub user reaches no installation of the App: install it on an account first")
	default:
		if err := githubapp.SetChoices(ctx, a.DB, p.State, reached); err != nil {
			return Authorized{}, err
		}
		return Authorized{Choices: len(reached)}, nil
	}
	if err := a.keep(ctx, in.ConnectionID, *keep); err != nil {
		return Authorized{}, err
	}
	return Authorized{Account: keep.Account}, nil
}

// reachable trades the code for a user token and lists the App's
// installations it reaches, each with the repositories the user reaches in
// it; the token goes no further than this function.
func reachable(ctx context.Context, app *githubapp.Client, code, redirectURI string) ([]githubapp.Choice, error) {
	userToken, err := app.ExchangeCode(ctx, code, redirectURI)
	if err != nil {
		return nil, refused("GitHub refused the authorization: " + err.Error())
	}
	insts, err := app.UserInstallations(ctx, userToken)
	if err != nil {
		return nil, refused("GitHub did not list your installations of the App: " + err.Error())
	}
	out := make([]githubapp.Choice, len(insts))
	for i, x := range insts {
		repos, err := app.UserInstallationRepositories(ctx, userToken, x.ID)
		if err != nil {
			return nil, refused("GitHub did not list the repositories you reach in the installation of " + x.Account.Login + ": " + err.Error())
		}
		out[i] = githubapp.Choice{InstallationID: x.ID, Account: x.Account.Login, Repositories: githubapp.AccessOf(repos)}
	}
	return out, nil
}

// keep stores the installation a login keeps with what its user reaches
// in it, once no other organisation holds it without an admin's approval.
func (a *Activities) keep(ctx context.Context, connectionID string, c githubapp.Choice) error {
	err := githubapp.Attach(ctx, a.DB, connectionID, c, time.Now())
	var na *githubapp.NeedsApprovalError
	if errors.As(err, &na) {
		return temporal.NewNonRetryableApplicationError(na.Error(), ErrTypeApproval, nil)
	}
	return err
}

// Choose keeps the installation the picker named, when it is one the user's
// token reached.
func (a *Activities) Choose(ctx context.Context, in Input) (string, error) {
	p, err := a.open(in.ConnectionID, in.Sealed)
	if err != nil {
		return "", err
	}
	pend, err := githubapp.FindPending(ctx, a.DB, p.State)
	if errors.Is(err, store.ErrNotFound) || (err == nil && pend.ConnectionID != in.ConnectionID) {
		return "", refused("unknown or expired login")
	}
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(pend.Choices, func(c githubapp.Choice) bool { return c.Account == p.Account })
	if i < 0 {
		return "", refused("account " + p.Account + " is not one of the installations your GitHub user reaches")
	}
	c := pend.Choices[i]
	return c.Account, a.keep(ctx, in.ConnectionID, c)
}

// Finish marks the login connected with the account as its hint and writes
// its enabled binding (connections.Finish); its attempts are dropped.
func (a *Activities) Finish(ctx context.Context, connectionID, account string) error {
	if _, err := connections.Finish(ctx, connections.Deps{DB: a.DB, Log: a.Log}, connectionID,
		connections.Options{HintFrom: connections.HintGiven, Hint: account}); err != nil {
		return err
	}
	a.log().Info("githubinstall: connected", "connection", connectionID)
	return githubapp.DropPending(ctx, a.DB, connectionID)
}

// Abandon ends a refused, denied or expired login: its attempts are dropped
// and a new pending login is deleted (connections.Abandon keeps an older one).
func (a *Activities) Abandon(ctx context.Context, connectionID string) error {
	if err := githubapp.DropPending(ctx, a.DB, connectionID); err != nil {
		return err
	}
	return connections.Abandon(ctx, a.DB, connectionID)
}

// Release drops a login's attempts and keeps the login pending: an
// organisation admin has to approve the install first (setup_action=request).
func (a *Activities) Release(ctx context.Context, connectionID string) error {
	return githubapp.DropPending(ctx, a.DB, connectionID)
}

func (a *Activities) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
