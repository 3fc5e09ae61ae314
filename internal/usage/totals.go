package usage

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// Tokens is what a run's model turns consumed, for a run list.
type Tokens struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
}

// TokensOf sums the tokens of each of the runs; a run without turns is absent.
func TokensOf(ctx context.Context, db store.DB, runIDs []string) (map[string]Tokens, error) {
	out := map[string]Tokens{}
	if len(runIDs) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT run_id::text, sum(prompt_tokens)::int, sum(completion_tokens)::int
		FROM model_turns WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`, runIDs)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var t Tokens
		if err := rows.Scan(&id, &t.Prompt, &t.Completion); err != nil {
			return nil, store.Map(err)
		}
		out[id] = t
	}
	return out, store.Map(rows.Err())
}
