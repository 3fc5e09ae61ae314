// Package usage records what each model turn of a run consumed (the
// provider's reported prompt and completion tokens, and their cost when the
// model is priced) and keeps the price table the instance admin edits. It
// owns the tables model_turns and model_prices.
package usage

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Turn is one model turn's usage.
type Turn struct {
	RunID            string `json:"-"`
	Seq              int    `json:"seq"`
	OrganisationID   string `json:"-"`
	GuildID          string `json:"-"`
	AgentID          string `json:"-"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	// Cost is nil when the model had no price when the turn was stored.
	Cost     *float64  `json:"cost"`
	Currency string    `json:"currency,omitempty"`
	At       time.Time `json:"at"`
}

// RecordTurn stores a turn's usage at (run, seq), priced from the table as
// it stands now: tokens × price per million, in the price's currency. A turn
// already stored keeps its first row (a retried model activity).
func RecordTurn(ctx context.Context, db store.DB, t Turn) error {
	_, err := db.Exec(ctx, `INSERT INTO model_turns (run_id, seq, organisation_id, guild_id, agent_id, provider, model,
		prompt_tokens, completion_tokens, cost, currency)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8::int, $9::int,
			($8::int * p.input_per_million + $9::int * p.output_per_million) / 1000000,
			coalesce(p.currency, '')
		FROM (SELECT 1) one LEFT JOIN model_prices p ON p.provider = $6 AND p.model = $7
		ON CONFLICT (run_id, seq) DO NOTHING`,
		t.RunID, t.Seq, t.OrganisationID, t.GuildID, t.AgentID, t.Provider, t.Model,
		max(t.PromptTokens, 0), max(t.CompletionTokens, 0))
	return store.Map(err)
}

// RunUsage is what a run consumed: its totals and each turn.
type RunUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Costs sums the priced turns per currency (one entry in practice).
	Costs []Cost `json:"costs"`
	// Unpriced counts the turns whose model had no price.
	Unpriced int    `json:"unpriced_turns"`
	Turns    []Turn `json:"turns"`
}

// Cost is an amount in one currency.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// OfRun returns the usage of a run, its turns in seq order.
func OfRun(ctx context.Context, db store.DB, runID string) (RunUsage, error) {
	rows, err := db.Query(ctx, `SELECT seq, provider, model, prompt_tokens, completion_tokens, cost::float8, currency, at
		FROM model_turns WHERE run_id = $1 ORDER BY seq`, runID)
	if err != nil {
		return RunUsage{}, store.Map(err)
	}
	defer rows.Close()
	out := RunUsage{Costs: []Cost{}, Turns: []Turn{}}
	for rows.Next() {
		t := Turn{RunID: runID}
		if err := rows.Scan(&t.Seq, &t.Provider, &t.Model, &t.PromptTokens, &t.CompletionTokens, &t.Cost, &t.Currency, &t.At); err != nil {
			return RunUsage{}, store.Map(err)
		}
		out.add(t)
	}
	return out, store.Map(rows.Err())
}

func (u *RunUsage) add(t Turn) {
	u.Turns = append(u.Turns, t)
	u.PromptTokens += t.PromptTokens
	u.CompletionTokens += t.CompletionTokens
	if t.Cost == nil {
		u.Unpriced++
		return
	}
	for i := range u.Costs {
		if u.Costs[i].Currency == t.Currency {
			u.Costs[i].Amount += *t.Cost
			return
		}
	}
	u.Costs = append(u.Costs, Cost{Amount: *t.Cost, Currency: t.Currency})
}
