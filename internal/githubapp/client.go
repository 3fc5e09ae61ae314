package githubapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Client calls GitHub as the App (App JWT, installation tokens) and as a
// user during the connect (the user token, discarded after).
type Client struct {
	Config
	HTTP *http.Client // nil: a client with a 30 s timeout
	Now  func() time.Time
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second}
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Installation is one install of the App on an account.
type Installation struct {
	ID      int64   `json:"id"`
	Account Account `json:"account"`
	AppID   int64   `json:"app_id"`
}

// Account is a GitHub user or organisation.
type Account struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
}

// Repository is a repository as GitHub lists it.
type Repository struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	FullName      string  `json:"full_name"`
	Owner         Account `json:"owner"`
	Private       bool    `json:"private"`
	DefaultBranch string  `json:"default_branch"`
	HTMLURL       string  `json:"html_url"`
	CloneURL      string  `json:"clone_url"`
	// Permissions are the user's, when a user's token listed it.
	Permissions *UserPermissions `json:"permissions,omitempty"`
}

// AccessToken is an installation access token.
type AccessToken struct {
	Token        string            `json:"token"`
	ExpiresAt    time.Time         `json:"expires_at"`
	Permissions  map[string]string `json:"permissions"`
	Repositories []Repository      `json:"repositories"`
}

// StatusError is GitHub's refusal of a call: its status and message.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("GitHub answered %d", e.Status)
	}
	return fmt.Sprintf("GitHub answered %d: %s", e.Status, e.Message)
}

// Gone reports whether a token request's refusal means the installation was
// removed (404) or suspended (403).
func Gone(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusForbidden)
}

// InstallURL is where the operator installs the App on an account and
// chooses its repositories; GitHub carries state back to the callback.
func (c *Client) InstallURL(state string) string {
	return c.WebURL + "/apps/" + url.PathEscape(c.Slug) + "/installations/new?state=" + url.QueryEscape(state)
}

// AuthorizeURL starts user authorization (the App's OAuth) with a state and
// the callback URL.
func (c *Client) AuthorizeURL(state, redirectURI string) string {
	q := url.Values{"client_id": {c.ClientID}, "state": {state}, "redirect_uri": {redirectURI}}
	return c.WebURL + "/login/oauth/authorize?" + q.Encode()
}

// ExchangeCode trades a callback's code for a user token. The token is for
// the connect's own checks only and is never stored.
func (c *Client) ExchangeCode(ctx context.Context, code, redirectURI string) (string, error) {
	form := url.Values{"client_id": {c.ClientID}, "client_secret": {c.ClientSecret}, "code": {code}, "redirect_uri": {redirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.WebURL+"/login/oauth/access_token", bytes.NewBufferString(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := c.do(req, &out); err != nil {
		return "", err
	}
	if out.AccessToken == "" {
		// GitHub answers 200 with an error field (bad_verification_code…).
		code := out.Error
		if code == "" {
			code = "no access_token"
		}
		return "", &StatusError{Status: http.StatusBadRequest, Message: "the code was refused (" + code + ")"}
	}
	return out.AccessToken, nil
}

// UserInstallations lists this App's installations the user's token reaches.
func (c *Client) UserInstallations(ctx context.Context, userToken string) ([]Installation, error) {
	var all []Installation
	for page := 1; ; page++ {
		var out struct {
			TotalCount    int            `json:"total_count"`
			Installations []Installation `json:"installations"`
		}
		if err := c.get(ctx, "/user/installations?per_page=100&page="+strconv.Itoa(page), "token "+userToken, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Installations...)
		if len(out.Installations) < 100 || len(all) >= out.TotalCount {
			return all, nil
		}
	}
}

// UserInstallationRepositories lists the repositories of an installation
// that the user's token reaches, each with the user's permissions.
func (c *Client) UserInstallationRepositories(ctx context.Context, userToken string, installationID int64) ([]Repository, error) {
	var all []Repository
	for page := 1; ; page++ {
		var out struct {
			TotalCount   int          `json:"total_count"`
			Repositories []Repository `json:"repositories"`
		}
		path := "/user/installations/" + strconv.FormatInt(installationID, 10) + "/repositories?per_page=100&page=" + strconv.Itoa(page)
		if err := c.get(ctx, path, "token "+userToken, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Repositories...)
		if len(out.Repositories) < 100 || len(all) >= out.TotalCount {
			return all, nil
		}
	}
}

// Installation reads one installation of the App (App JWT).
func (c *Client) Installation(ctx context.Context, id int64) (Installation, error) {
	jwt, err := c.AppJWT(c.now())
	if err != nil {
		return Installation{}, err
	}
	var out Installation
	err = c.get(ctx, "/app/installations/"+strconv.FormatInt(id, 10), "Bearer "+jwt, &out)
	return out, err
}

// TokenRequest asks for an installation access token limited to
// repositories (by id, else by name) with permissions.
type TokenRequest struct {
	RepositoryIDs []int64           `json:"repository_ids,omitempty"`
	Repositories  []string          `json:"repositories,omitempty"`
	Permissions   map[string]string `json:"permissions,omitempty"`
}

// CodingPermissions are what a coding run's token may do on a repository
// its login's user can push to.
var CodingPermissions = map[string]string{"contents": "write", "pull_requests": "write"}

// ReadPermissions are what it may do on one the user can only read.
var ReadPermissions = map[string]string{"contents": "read", "pull_requests": "read"}

// AccessToken requests an installation access token (App JWT). GitHub's
// answer names every repository as it is now.
func (c *Client) AccessToken(ctx context.Context, installationID int64, tr TokenRequest) (AccessToken, error) {
	jwt, err := c.AppJWT(c.now())
	if err != nil {
		return AccessToken{}, err
	}
	body, err := json.Marshal(tr)
	if err != nil {
		return AccessToken{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		c.APIURL+"/app/installations/"+strconv.FormatInt(installationID, 10)+"/access_tokens", bytes.NewReader(body))
	if err != nil {
		return AccessToken{}, err
	}
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("Content-Type", "application/json")
	var out AccessToken
	err = c.do(req, &out)
	return out, err
}

// InstallationRepositories lists the repositories an installation reaches,
// with a token of that installation.
func (c *Client) InstallationRepositories(ctx context.Context, token string) ([]Repository, error) {
	var all []Repository
	for page := 1; ; page++ {
		var out struct {
			TotalCount   int          `json:"total_count"`
			Repositories []Repository `json:"repositories"`
		}
		if err := c.get(ctx, "/installation/repositories?per_page=100&page="+strconv.Itoa(page), "token "+token, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Repositories...)
		if len(out.Repositories) < 100 || len(all) >= out.TotalCount {
			return all, nil
		}
	}
}

// Repositories lists what an installation reaches, with a read-only token
// of its own made for the listing.
func (c *Client) Repositories(ctx context.Context, installationID int64) ([]Repository, error) {
	tok, err := c.AccessToken(ctx, installationID, TokenRequest{Permissions: map[string]string{"metadata": "read"}})
	if err != nil {
		return nil, err
	}
	return c.InstallationRepositories(ctx, tok.Token)
}

// RevokeToken ends an installation token before its expiry (DELETE
// /installation/token, authenticated by the token itself). A token GitHub
// no longer knows (expired, revoked before) counts as revoked.
func (c *Client) RevokeToken(ctx context.Context, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.APIURL+"/installation/token", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+token)
	err = c.do(req, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusUnauthorized {
		return nil
	}
	return err
}

func (c *Client) get(ctx context.Context, path, auth string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.APIURL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	return c.do(req, out)
}

func (c *Client) do(req *http.Request, out any) error {
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/vnd.github+json")
	}
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "guilds")
	resp, err := c.http().Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e) // a body that is not JSON leaves the message empty
		return &StatusError{Status: resp.StatusCode, Message: clip(e.Message, 200)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("githubapp: GitHub's answer cannot be read: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
