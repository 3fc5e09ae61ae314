package pinnedprices

import (
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/validation"
)

// ValidateCoins checks a list sent by an operator (field is its JSON name,
// e.g. "coins"): 1 to MaxCoins coins with well-formed, distinct ids. It
// returns the list with ids normalised and symbol and name trimmed.
func ValidateCoins(field string, coins []Coin) ([]Coin, error) {
	v := &validation.Error{}
	switch {
	case len(coins) == 0:
		v.Problems = append(v.Problems, validation.Problem{Field: field, Message: "pick at least one coin"})
	case len(coins) > MaxCoins:
		v.Problems = append(v.Problems, validation.Problem{Field: field, Message: fmt.Sprintf("at most %d coins (got %d)", MaxCoins, len(coins))})
	}
	out := make([]Coin, len(coins))
	seen := map[string]bool{}
	for i, c := range coins {
		f := fmt.Sprintf("%s[%d].id", field, i)
		id, ok := NormalizeID(c.ID)
		switch {
		case !ok:
			v.Problems = append(v.Problems, validation.Problem{Field: f, Message: "is not a CoinGecko coin id (like bitcoin or usd-coin)"})
		case seen[id]:
			v.Problems = append(v.Problems, validation.Problem{Field: f, Message: "is already in the list"})
		}
		seen[id] = true
		out[i] = Coin{ID: id, Symbol: clip(strings.TrimSpace(c.Symbol), 40), Name: clip(strings.TrimSpace(c.Name), 200)}
	}
	if len(v.Problems) > 0 {
		return nil, v
	}
	return out, nil
}

// Unquoted lists a problem for every coin the quote map lacks.
func Unquoted(field string, coins []Coin, quotes map[string]Price) error {
	v := &validation.Error{}
	for i, c := range coins {
		if _, ok := quotes[c.ID]; !ok {
			v.Problems = append(v.Problems, validation.Problem{Field: fmt.Sprintf("%s[%d].id", field, i),
				Message: c.ID + " is not quoted by CoinGecko; find the coin's id with search"})
		}
	}
	if len(v.Problems) > 0 {
		return v
	}
	return nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
