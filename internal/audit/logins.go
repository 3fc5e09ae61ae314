package audit

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// CallLogin is the login that served one call of a run, as the trail holds it.
type CallLogin struct {
	Scope       string `json:"login_scope,omitempty"`
	AccountHint string `json:"account_hint,omitempty"`
}

// LoginsOfRun returns, by call seq, the login each of a run's calls used;
// calls served without a login are absent.
func LoginsOfRun(ctx context.Context, db store.DB, runID string) (map[int]CallLogin, error) {
	rows, err := db.Query(ctx, `SELECT seq, login_scope, account_hint FROM audit_events
		WHERE run_id = $1 AND action = 'tool_call' AND (account_hint <> '' OR login_scope <> '')`, runID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := map[int]CallLogin{}
	for rows.Next() {
		var seq int
		var l CallLogin
		if err := rows.Scan(&seq, &l.Scope, &l.AccountHint); err != nil {
			return nil, store.Map(err)
		}
		out[seq] = l
	}
	return out, store.Map(rows.Err())
}
