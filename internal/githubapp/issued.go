package githubapp

import (
	"context"
	"errors"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// A token stays in the redaction set this long after it expires: a result
// printed before expiry may still be read back (a log, a file) later.
const redactAfterExpiry = time.Hour

// TokenAAD binds a sealed installation token to the agent it was issued for.
func TokenAAD(agentID string) []byte { return []byte("github-token:" + agentID) }

// remember keeps an issued token for the agent's redaction set: in memory
// for this worker and, sealed, in the database for every other worker (a
// tool call of the same run may run anywhere). Without a keyring a token
// cannot be kept for the others, so the generation is refused rather than
// handing the sandbox a token another worker would not redact.
func (g *Generations) remember(ctx context.Context, agentID string, tok AccessToken) error {
	g.mu.Lock()
	if g.issued == nil {
		g.issued = map[string][]issued{}
	}
	g.issued[agentID] = append(g.issued[agentID], issued{token: tok.Token, expires: tok.ExpiresAt})
	g.mu.Unlock()
	if g.Keyring == nil {
		return errors.New("github: no credential key on this worker to keep installation tokens for redaction (set GUILDS_ENCRYPTION_KEY)")
	}
	ct, err := g.Keyring.Seal([]byte(tok.Token), TokenAAD(agentID))
	if err != nil {
		return err
	}
	_, err = g.DB.Exec(ctx, `INSERT INTO github_issued_tokens (agent_id, key_id, ciphertext, expires_at) VALUES ($1, $2, $3, $4)`,
		agentID, g.Keyring.ActiveKeyID(), ct, tok.ExpiresAt)
	return store.Map(err)
}

// RunSecrets is every token issued to the agent, by any worker, that has
// not been expired for long, for the run's redaction set.
func (g *Generations) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	g.mu.Lock()
	live := g.issued[agentID][:0]
	for _, t := range g.issued[agentID] {
		if time.Now().Before(t.expires.Add(redactAfterExpiry)) {
			live = append(live, t)
			add(t.token)
		}
	}
	if g.issued != nil {
		g.issued[agentID] = live
	}
	g.mu.Unlock()
	if g.Keyring == nil || g.DB == nil {
		return out, nil
	}
	rows, err := g.DB.Query(ctx, `SELECT ciphertext FROM github_issued_tokens WHERE agent_id = $1 AND expires_at > $2`,
		agentID, time.Now().Add(-redactAfterExpiry))
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ct []byte
		if err := rows.Scan(&ct); err != nil {
			return nil, err
		}
		pt, err := g.Keyring.Open(ct, TokenAAD(agentID))
		if err != nil {
			return nil, err // a token that cannot be opened cannot be redacted: fail the call closed
		}
		add(string(pt))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Long expired tokens are of no use to anyone.
	if _, err := g.DB.Exec(ctx, `DELETE FROM github_issued_tokens WHERE agent_id = $1 AND expires_at < $2`,
		agentID, time.Now().Add(-redactAfterExpiry)); err != nil {
		g.log().Warn("github: expired installation tokens not removed", "agent_id", agentID, "err", err)
	}
	return out, nil
}
