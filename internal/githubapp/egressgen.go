package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// grantEgress hands a fresh token to the route of the agent's proxy socket,
// for the repositories GitHub says it reaches.
func (g *Generations) grantEgress(agentID string, app *Client, toks []AccessToken) error {
	web, err := url.Parse(app.WebURL)
	if err != nil {
		return fmt.Errorf("github: the App's web URL: %w", err)
	}
	api, err := url.Parse(app.APIURL)
	if err != nil {
		return fmt.Errorf("github: the App's API URL: %w", err)
	}
	gr := egressGrant{tokens: map[string]string{}, web: web, api: api}
	for i, tok := range toks {
		if i == 0 || tok.ExpiresAt.Before(gr.expires) {
			gr.expires = tok.ExpiresAt
		}
		for _, r := range tok.Repositories {
			name := strings.ToLower(r.FullName)
			gr.repos = append(gr.repos, name)
			gr.tokens[name] = tok.Token
		}
	}
	g.setGrant(agentID, gr)
	return nil
}

// GuildEgress reports whether the guild lets its coding agents reach GitHub
// (on unless the guild turned it off).
func GuildEgress(ctx context.Context, db store.DB, guildID string) (bool, error) {
	var on bool
	err := db.QueryRow(ctx, `SELECT egress FROM github_guild_settings WHERE guild_id = $1`, guildID).Scan(&on)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	return on, store.Map(err)
}

// SetGuildEgress records the guild's choice; the next generation follows it.
func SetGuildEgress(ctx context.Context, db store.DB, guildID string, on bool) error {
	_, err := db.Exec(ctx, `INSERT INTO github_guild_settings (guild_id, egress) VALUES ($1, $2)
ON CONFLICT (guild_id) DO UPDATE SET egress = EXCLUDED.egress, updated_at = now()`, guildID, on)
	return store.Map(err)
}

// End runs when a run of the agent ends: the route forgets the agent's
// token and every token issued to the agent that is still live is revoked
// at GitHub, by whichever worker issued it. The tokens stay in the
// redaction set until they would have expired. A later generation (or
// another run's next shell call) gets a fresh token.
func (g *Generations) End(ctx context.Context, agentID string) error {
	g.dropGrant(agentID)
	if g.DB == nil || g.Keyring == nil || g.App == nil {
		return nil
	}
	rows, err := g.DB.Query(ctx, `SELECT id, ciphertext FROM github_issued_tokens
WHERE agent_id = $1 AND revoked_at IS NULL AND expires_at > now()`, agentID)
	if err != nil {
		return store.Map(err)
	}
	type live struct {
		id  int64
		tok string
	}
	var toks []live
	for rows.Next() {
		var l live
		var ct []byte
		if err := rows.Scan(&l.id, &ct); err != nil {
			rows.Close()
			return err
		}
		pt, err := g.Keyring.Open(ct, TokenAAD(agentID))
		if err != nil {
			rows.Close()
			return fmt.Errorf("github: an issued token cannot be opened to revoke it: %w", err)
		}
		l.tok = string(pt)
		toks = append(toks, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(toks) == 0 {
		return nil
	}
	app, err := g.App()
	if err != nil {
		return err
	}
	var failed []error
	for _, l := range toks {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := app.RevokeToken(rctx, l.tok)
		cancel()
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if _, err := g.DB.Exec(ctx, `UPDATE github_issued_tokens SET revoked_at = now() WHERE id = $1`, l.id); err != nil {
			failed = append(failed, store.Map(err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("github: revoke the agent's installation tokens: %w", errors.Join(failed...))
	}
	return nil
}
