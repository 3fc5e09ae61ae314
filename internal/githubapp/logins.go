package githubapp

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/store"
)

// Selected is a repository a login selected, with GitHub's id for it.
type Selected struct {
	GitHubID      int64  `json:"github_id"`
	Name          string `json:"name"`
	FullName      string `json:"full_name,omitempty"`
	URL           string `json:"url"`
	DefaultBranch string `json:"default_branch"`
}

// Login is a connected github login's installation and selection.
type Login struct {
	ConnectionID   string
	InstallationID int64
	Account        string
	// Selected is nil until the login picks repositories.
	Selected []Selected
}

// SaveLogin stores the installation a login was connected with.
func SaveLogin(ctx context.Context, db store.DB, connectionID string, installationID int64, account string) error {
	_, err := db.Exec(ctx, `INSERT INTO github_logins (connection_id, installation_id, account_login) VALUES ($1, $2, $3)
ON CONFLICT (connection_id) DO UPDATE SET installation_id = EXCLUDED.installation_id, account_login = EXCLUDED.account_login,
    selected = CASE WHEN github_logins.installation_id = EXCLUDED.installation_id THEN github_logins.selected END, updated_at = now()`,
		connectionID, installationID, account)
	return store.Map(err)
}

// GetLogin reads a login's installation; store.ErrNotFound before it connected.
func GetLogin(ctx context.Context, db store.DB, connectionID string) (Login, error) {
	l := Login{ConnectionID: connectionID}
	var sel []byte
	err := db.QueryRow(ctx, `SELECT installation_id, account_login, selected FROM github_logins WHERE connection_id = $1`, connectionID).
		Scan(&l.InstallationID, &l.Account, &sel)
	if err != nil {
		return Login{}, store.Map(err)
	}
	if len(sel) > 0 && string(sel) != "null" {
		if err := json.Unmarshal(sel, &l.Selected); err != nil {
			return Login{}, err
		}
		if l.Selected == nil {
			l.Selected = []Selected{}
		}
	}
	return l, nil
}

// SetSelected replaces a login's selection.
func SetSelected(ctx context.Context, db store.DB, connectionID string, sel []Selected) error {
	if sel == nil {
		sel = []Selected{}
	}
	b, err := json.Marshal(sel)
	if err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `UPDATE github_logins SET selected = $2, updated_at = now() WHERE connection_id = $1`, connectionID, b)
	if err == nil && tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return store.Map(err)
}
