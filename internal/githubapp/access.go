package githubapp

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// AccessTTL is how long what a user could reach at the connect counts: the
// user's token is not kept, so after that the login has to be connected
// again to work on its repositories.
const AccessTTL = 30 * 24 * time.Hour

// Permissions of a repository for a login.
const (
	PermRead  = "read"
	PermWrite = "write" // the user can push (admin, maintain or push)
)

// RepoAccess is a repository the connecting user reaches and what they may do.
type RepoAccess struct {
	GitHubID   int64  `json:"github_id"`
	FullName   string `json:"full_name"`
	Permission string `json:"permission"`
}

// UserPermissions are a repository's permissions for a user, as GitHub
// lists them with the user's token.
type UserPermissions struct {
	Admin    bool `json:"admin"`
	Maintain bool `json:"maintain"`
	Push     bool `json:"push"`
	Triage   bool `json:"triage"`
	Pull     bool `json:"pull"`
}

// Level is write when the user can push, else read.
func (p *UserPermissions) Level() string {
	if p != nil && (p.Admin || p.Maintain || p.Push) {
		return PermWrite
	}
	return PermRead
}

// AccessOf is what a user's listing of an installation's repositories grants.
func AccessOf(repos []Repository) []RepoAccess {
	out := make([]RepoAccess, 0, len(repos))
	for _, r := range repos {
		if r.Permissions != nil && !r.Permissions.Pull && r.Permissions.Level() == PermRead {
			continue // listed without even read: nothing to offer
		}
		out = append(out, RepoAccess{GitHubID: r.ID, FullName: r.FullName, Permission: r.Permissions.Level()})
	}
	return out
}

// Access is a login's record of what its user reaches.
type Access struct {
	Repos     map[int64]RepoAccess
	CheckedAt time.Time
	ExpiresAt time.Time // zero: never read (a login connected before the record existed)
}

// Current reports whether the record is there and unexpired at now.
func (a Access) Current(now time.Time) bool { return !a.ExpiresAt.IsZero() && now.Before(a.ExpiresAt) }

// ErrAccessExpired: the login's record of what its user reaches is missing
// or expired; connecting the login again reads it anew.
var ErrAccessExpired = errors.New("what this GitHub login's user can reach was checked too long ago (or never): connect GitHub again")

// SaveAccess replaces a login's record with what its user reaches now.
func SaveAccess(ctx context.Context, db store.DB, connectionID string, repos []RepoAccess, now time.Time) error {
	if _, err := db.Exec(ctx, `DELETE FROM github_login_repositories WHERE connection_id = $1`, connectionID); err != nil {
		return store.Map(err)
	}
	for _, r := range repos {
		if _, err := db.Exec(ctx, `INSERT INTO github_login_repositories (connection_id, github_id, full_name, permission)
VALUES ($1, $2, $3, $4) ON CONFLICT (connection_id, github_id) DO UPDATE SET full_name = EXCLUDED.full_name, permission = EXCLUDED.permission`,
			connectionID, r.GitHubID, r.FullName, r.Permission); err != nil {
			return store.Map(err)
		}
	}
	tag, err := db.Exec(ctx, `UPDATE github_logins SET access_checked_at = $2, access_expires_at = $3, updated_at = now() WHERE connection_id = $1`,
		connectionID, now, now.Add(AccessTTL))
	if err == nil && tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return store.Map(err)
}

// GetAccess reads a login's record; store.ErrNotFound when the login has
// no installation.
func GetAccess(ctx context.Context, db store.DB, connectionID string) (Access, error) {
	var checked, expires *time.Time
	if err := db.QueryRow(ctx, `SELECT access_checked_at, access_expires_at FROM github_logins WHERE connection_id = $1`, connectionID).
		Scan(&checked, &expires); err != nil {
		return Access{}, store.Map(err)
	}
	a := Access{Repos: map[int64]RepoAccess{}}
	if checked != nil {
		a.CheckedAt = *checked
	}
	if expires != nil {
		a.ExpiresAt = *expires
	}
	rows, err := db.Query(ctx, `SELECT github_id, full_name, permission FROM github_login_repositories WHERE connection_id = $1`, connectionID)
	if err != nil {
		return Access{}, store.Map(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RepoAccess, error) {
		var x RepoAccess
		return x, r.Scan(&x.GitHubID, &x.FullName, &x.Permission)
	})
	if err != nil {
		return Access{}, store.Map(err)
	}
	for _, x := range list {
		a.Repos[x.GitHubID] = x
	}
	return a, nil
}

// CurrentAccess is GetAccess that answers ErrAccessExpired for a record
// that is missing or expired.
func CurrentAccess(ctx context.Context, db store.DB, connectionID string, now time.Time) (Access, error) {
	a, err := GetAccess(ctx, db, connectionID)
	if err == nil && !a.Current(now) {
		return a, ErrAccessExpired
	}
	return a, err
}

// find is the record of a selected repository: by GitHub's id, or by name
// for one selected before its id was known.
func (a Access) find(s Selected) (RepoAccess, bool) {
	if s.GitHubID != 0 {
		ra, ok := a.Repos[s.GitHubID]
		return ra, ok
	}
	for _, ra := range a.Repos {
		if ra.FullName == s.FullName || (s.FullName == "" && strings.HasSuffix(ra.FullName, "/"+s.Name)) {
			return ra, true
		}
	}
	return RepoAccess{}, false
}
