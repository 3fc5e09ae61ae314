package usage

import (
	"context"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Price is what one provider's model costs per million tokens.
type Price struct {
	Provider         string    `json:"provider"`
	Model            string    `json:"model"`
	InputPerMillion  float64   `json:"input_per_million"`
	OutputPerMillion float64   `json:"output_per_million"`
	Currency         string    `json:"currency"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// MaxPerMillion bounds a price per million tokens (the column's precision).
const MaxPerMillion = 1_000_000

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// ValidCurrency reports whether c is a three-letter upper-case code (ISO 4217 form).
func ValidCurrency(c string) bool { return currencyCode.MatchString(c) }

// Check validates a price; known says which providers exist.
func (p *Price) Check(known func(string) bool) error {
	p.Provider, p.Model, p.Currency = strings.TrimSpace(p.Provider), strings.TrimSpace(p.Model), strings.TrimSpace(p.Currency)
	if p.Currency == "" {
		p.Currency = "USD"
	}
	var probs validation.Problems
	probs.Check(known(p.Provider), "provider", "must be a known model provider")
	probs.Check(p.Model != "" && len(p.Model) <= 200 && utf8.ValidString(p.Model), "model", "is required: the model id as the provider names it (at most 200 bytes)")
	probs.Check(validAmount(p.InputPerMillion), "input_per_million", "must be a number from 0 to %d", MaxPerMillion)
	probs.Check(validAmount(p.OutputPerMillion), "output_per_million", "must be a number from 0 to %d", MaxPerMillion)
	probs.Check(ValidCurrency(p.Currency), "currency", "must be a three-letter currency code such as USD or EUR")
	return probs.Err()
}

func validAmount(v float64) bool {
	return !math.IsNaN(v) && v >= 0 && v <= MaxPerMillion
}

// SetPrice stores a price, replacing the model's earlier one. Turns already
// stored keep the cost they were given.
func SetPrice(ctx context.Context, db store.DB, p Price) (Price, error) {
	err := db.QueryRow(ctx, `INSERT INTO model_prices (provider, model, input_per_million, output_per_million, currency)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (provider, model) DO UPDATE SET input_per_million = EXCLUDED.input_per_million,
			output_per_million = EXCLUDED.output_per_million, currency = EXCLUDED.currency, updated_at = now()
		RETURNING `+priceCols, p.Provider, p.Model, p.InputPerMillion, p.OutputPerMillion, p.Currency).
		Scan(&p.Provider, &p.Model, &p.InputPerMillion, &p.OutputPerMillion, &p.Currency, &p.UpdatedAt)
	return p, store.Map(err)
}

// DeletePrice removes a model's price; ErrNotFound when it had none.
func DeletePrice(ctx context.Context, db store.DB, provider, model string) error {
	tag, err := db.Exec(ctx, `DELETE FROM model_prices WHERE provider = $1 AND model = $2`, provider, model)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

const priceCols = `provider, model, input_per_million::float8, output_per_million::float8, currency, updated_at`

// Prices lists the price table by provider and model.
func Prices(ctx context.Context, db store.DB) ([]Price, error) {
	rows, err := db.Query(ctx, `SELECT `+priceCols+` FROM model_prices ORDER BY provider, model`)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Price{}
	for rows.Next() {
		var p Price
		if err := rows.Scan(&p.Provider, &p.Model, &p.InputPerMillion, &p.OutputPerMillion, &p.Currency, &p.UpdatedAt); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, p)
	}
	return out, store.Map(rows.Err())
}
