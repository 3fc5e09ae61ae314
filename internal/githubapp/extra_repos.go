package githubapp

import (
	"context"
	"net/url"
	"path"
	"strings"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// ExtraRepository is a git URL an operator adds to a guild by hand (no
// GitHub login behind it).
type ExtraRepository struct {
	Name          string `json:"name,omitempty"`
	URL           string `json:"url"`
	DefaultBranch string `json:"default_branch,omitempty"`
}

// Check validates an extra git URL and fills the name from the URL's last
// segment when it is empty. Only https URLs without credentials, query or
// fragment: a token in a URL would be stored and shown in clear.
func (r *ExtraRepository) Check() error {
	var probs validation.Problems
	r.URL = strings.TrimSpace(r.URL)
	u, err := url.Parse(r.URL)
	switch {
	case r.URL == "":
		probs.Add("url", "is required: the repository's https clone URL (https://host/owner/repo.git)")
	case err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		probs.Add("url", "must be an https URL such as https://host/owner/repo.git")
	case u.User != nil:
		probs.Add("url", "must not carry a user or password: the guild's agents authenticate another way")
	case u.RawQuery != "" || u.Fragment != "":
		probs.Add("url", "must have no query or fragment")
	case strings.Trim(u.Path, "/") == "":
		probs.Add("url", "names no repository: add its path (https://host/owner/repo.git)")
	case len(r.URL) > 500:
		probs.Add("url", "is longer than 500 characters")
	}
	if r.Name == "" && err == nil && u != nil {
		r.Name = strings.TrimSuffix(path.Base(strings.TrimRight(u.Path, "/")), ".git")
	}
	r.Name = strings.TrimSpace(r.Name)
	probs.Check(len(r.Name) <= 100, "name", "is longer than 100 characters")
	b := r.DefaultBranch
	probs.Check(len(b) <= 255 && !strings.ContainsAny(b, " \t\n~^:?*[\\") && !strings.Contains(b, "..") && !strings.HasPrefix(b, "-"),
		"default_branch", "is not a git branch name")
	return probs.Err()
}

// AddExtraRepository adds a checked extra git URL to a guild;
// store.ErrConflict when the guild lists that URL already.
func AddExtraRepository(ctx context.Context, db store.DB, guildID string, r ExtraRepository) (GuildRepository, error) {
	g := GuildRepository{Name: r.Name, URL: r.URL, DefaultBranch: r.DefaultBranch}
	err := db.QueryRow(ctx, `INSERT INTO guild_repositories (guild_id, name, url, default_branch) VALUES ($1, $2, $3, $4) RETURNING id::text`,
		guildID, r.Name, r.URL, r.DefaultBranch).Scan(&g.ID)
	return g, store.Map(err)
}

// RemoveExtraRepository deletes one of a guild's extra git URLs. A row a
// GitHub login's selection wrote is not one: ErrFromLogin.
func RemoveExtraRepository(ctx context.Context, db store.DB, guildID, id string) error {
	var fromLogin bool
	err := db.QueryRow(ctx, `SELECT connection_id IS NOT NULL FROM guild_repositories WHERE guild_id = $1 AND id::text = $2`, guildID, id).Scan(&fromLogin)
	if err != nil {
		return store.Map(err)
	}
	if fromLogin {
		return ErrFromLogin
	}
	_, err = db.Exec(ctx, `DELETE FROM guild_repositories WHERE guild_id = $1 AND id::text = $2`, guildID, id)
	return store.Map(err)
}

// ErrFromLogin: the repository comes from a GitHub login's selection.
var ErrFromLogin = errFromLogin{}

type errFromLogin struct{}

func (errFromLogin) Error() string {
	return "this repository comes from a GitHub login's selection: change the selection on the login (PUT /api/mcp/connections/{id}/github/selected)"
}
