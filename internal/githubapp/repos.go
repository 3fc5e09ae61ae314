package githubapp

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// GuildRepository is a repository of a guild: an extra git URL, or one a
// guild-owned github login selected (ConnectionID, GitHubID).
type GuildRepository struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	URL           string `json:"url"`
	DefaultBranch string `json:"default_branch"`
	ConnectionID  string `json:"connection_id,omitempty"`
	GitHubID      int64  `json:"github_id,omitempty"`
}

// GuildRepositories lists a guild's repositories, by name.
func GuildRepositories(ctx context.Context, db store.DB, guildID string) ([]GuildRepository, error) {
	rows, err := db.Query(ctx, `SELECT id::text, name, url, default_branch, coalesce(connection_id::text, ''), coalesce(github_id, 0)
FROM guild_repositories WHERE guild_id = $1 ORDER BY name, url`, guildID)
	if err != nil {
		return nil, store.Map(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GuildRepository, error) {
		var g GuildRepository
		return g, r.Scan(&g.ID, &g.Name, &g.URL, &g.DefaultBranch, &g.ConnectionID, &g.GitHubID)
	})
	if out == nil {
		out = []GuildRepository{}
	}
	return out, store.Map(err)
}

// MirrorSelection makes a guild's repositories of one login its selection:
// rows of that login not selected any more go, the others are written with
// their current name, URL and branch.
func MirrorSelection(ctx context.Context, db store.DB, guildID, connectionID string, sel []Selected) error {
	ids := make([]int64, len(sel))
	for i, r := range sel {
		ids[i] = r.GitHubID
	}
	if _, err := db.Exec(ctx, `DELETE FROM guild_repositories WHERE guild_id = $1 AND connection_id = $2 AND NOT (github_id = ANY($3))`,
		guildID, connectionID, ids); err != nil {
		return store.Map(err)
	}
	for _, r := range sel {
		// A row of the same repository (by id) is updated in place; a URL the
		// guild already lists as an extra git URL is taken over by the login.
		tag, err := db.Exec(ctx, `UPDATE guild_repositories SET name = $4, url = $5, default_branch = $6, updated_at = now()
WHERE guild_id = $1 AND connection_id = $2 AND github_id = $3`, guildID, connectionID, r.GitHubID, r.Name, r.URL, r.DefaultBranch)
		if err != nil {
			return store.Map(err)
		}
		if tag.RowsAffected() > 0 {
			continue
		}
		if _, err := db.Exec(ctx, `INSERT INTO guild_repositories (guild_id, connection_id, github_id, name, url, default_branch)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (guild_id, url) DO UPDATE SET connection_id = EXCLUDED.connection_id, github_id = EXCLUDED.github_id,
    name = EXCLUDED.name, default_branch = EXCLUDED.default_branch, updated_at = now()`,
			guildID, connectionID, r.GitHubID, r.Name, r.URL, r.DefaultBranch); err != nil {
			return store.Map(err)
		}
	}
	return nil
}

// SetRepositoryURL records a repository's current name and URL after GitHub
// renamed it (or its owner): on the guild repositories and in the selection
// of every login that holds its id.
func SetRepositoryURL(ctx context.Context, db store.DB, githubID int64, name, url string) error {
	if _, err := db.Exec(ctx, `UPDATE guild_repositories SET name = $2, url = $3, updated_at = now()
WHERE github_id = $1 AND (name <> $2 OR url <> $3)`, githubID, name, url); err != nil {
		return store.Map(err)
	}
	_, err := db.Exec(ctx, `UPDATE github_logins SET selected = (
    SELECT jsonb_agg(CASE WHEN (e->>'github_id')::bigint = $1
        THEN e || jsonb_build_object('name', $2::text, 'url', $3::text) ELSE e END)
    FROM jsonb_array_elements(selected) e), updated_at = now()
WHERE selected @> jsonb_build_array(jsonb_build_object('github_id', $1::bigint))`, githubID, name, url)
	return store.Map(err)
}

// ChainLogin is a github login on an agent's chain, widest first.
type ChainLogin struct {
	ConnectionID string
	OwnerScope   string
	Status       string
	AccountHint  string
}

// LoginsOfChain lists the github logins of an organisation, a guild and
// (when agentID is set) an agent, widest first (read through connstore).
func LoginsOfChain(ctx context.Context, db store.DB, orgID, guildID, agentID string) ([]ChainLogin, error) {
	var out []ChainLogin
	for _, place := range [][2]string{{"organisation", orgID}, {"guild", guildID}, {"agent", agentID}} {
		if place[1] == "" {
			continue
		}
		rows, err := connstore.List(ctx, db, place[0], place[1])
		if err != nil {
			return nil, err
		}
		for _, c := range rows {
			if c.Server.Kind == catalog.KindGitHub {
				out = append(out, ChainLogin{ConnectionID: c.ID.String(), OwnerScope: c.OwnerScope, Status: string(c.Status), AccountHint: c.AccountHint})
			}
		}
	}
	return out, nil
}

// Effective is the selection a place uses: its own login's, else the
// nearest wider one's (a narrower scope inherits until its login selects a
// set). ConnectionID is "" when no login on the chain has selected.
type Effective struct {
	ConnectionID string
	OwnerScope   string
	Status       string // a login that is not connected fails the generation that needs it
	AccountHint  string
	Selected     []Selected
}

// EffectiveSelection walks an agent's (or a guild's, agentID "") chain from
// the narrowest scope up and answers the first login with a selection,
// whatever its status: a disconnected one is not skipped for a wider one,
// so the generation that needs it fails instead of working elsewhere.
func EffectiveSelection(ctx context.Context, db store.DB, orgID, guildID, agentID string) (Effective, error) {
	chain, err := LoginsOfChain(ctx, db, orgID, guildID, agentID)
	if err != nil {
		return Effective{}, err
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		gl, err := GetLogin(ctx, db, l.ConnectionID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Effective{}, err
		}
		if gl.Selected != nil {
			return Effective{ConnectionID: l.ConnectionID, OwnerScope: l.OwnerScope, Status: l.Status, AccountHint: l.AccountHint,
				Selected: gl.Selected}, nil
		}
	}
	return Effective{}, nil
}

// Starter is who started a login's browser flow (connection_oauth_starts,
// written by the API's browser binding): the hash of the cookie's nonce
// and the user. store.ErrNotFound when nobody is recorded.
func Starter(ctx context.Context, db store.DB, connectionID string) (browserHash []byte, userID string, err error) {
	err = db.QueryRow(ctx, `SELECT browser_hash, user_id::text FROM connection_oauth_starts WHERE connection_id = $1`, connectionID).
		Scan(&browserHash, &userID)
	return browserHash, userID, store.Map(err)
}

// SameRepository reports whether a URL a client sent names a repository
// GitHub lists (its web or clone URL, with or without .git, any case).
func SameRepository(u string, r Repository) bool {
	norm := func(s string) string {
		return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "/"), ".git"))
	}
	n := norm(u)
	return n != "" && (n == norm(r.HTMLURL) || n == norm(r.CloneURL))
}
