package pinnedprices

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// MaxCoins is how many coins one login may pin, and how many search answers.
const MaxCoins = 20

// Coin is one pinned coin as CoinGecko names it.
type Coin struct {
	ID     string `json:"id"`
	Symbol string `json:"symbol"`
	Name   string `json:"name"`
}

// Price is a coin's USD price and its change over 24 hours (nil when
// CoinGecko gives none).
type Price struct {
	USD       float64
	Change24h *float64
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// NormalizeID lowercases and trims an id; ok is false when it cannot be a
// CoinGecko coin id.
func NormalizeID(id string) (string, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	return id, idPattern.MatchString(id)
}

// Search asks GET /search and returns its coins (exchanges, categories and
// the rest are dropped), at most MaxCoins.
func Search(ctx context.Context, c adapters.Conn, query string) ([]Coin, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, errors.New("the search query is empty")
	}
	var out struct {
		Coins []Coin `json:"coins"`
	}
	if err := get(ctx, c, "/search", url.Values{"query": {q}}, &out); err != nil {
		return nil, refusedAsRejected(err)
	}
	if len(out.Coins) > MaxCoins {
		out.Coins = out.Coins[:MaxCoins]
	}
	if out.Coins == nil {
		out.Coins = []Coin{}
	}
	return out.Coins, nil
}

// Quote asks GET /simple/price for the ids in USD with the 24-hour change.
// An id missing from the answer (or without a USD price) is left out of the
// map: CoinGecko does not quote it.
func Quote(ctx context.Context, c adapters.Conn, ids []string) (map[string]Price, error) {
	if len(ids) == 0 {
		return map[string]Price{}, nil
	}
	uniq := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for _, raw := range ids {
		id, ok := NormalizeID(raw)
		if !ok {
			continue // not an id CoinGecko could quote
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	out := map[string]Price{}
	if len(uniq) == 0 {
		return out, nil
	}
	sort.Strings(uniq)
	q := url.Values{"ids": {strings.Join(uniq, ",")}, "vs_currencies": {"usd"}, "include_24hr_change": {"true"}}
	var answer map[string]map[string]*float64
	if err := get(ctx, c, "/simple/price", q, &answer); err != nil {
		return nil, refusedAsRejected(err)
	}
	for id, v := range answer {
		if p := v["usd"]; p != nil && seen[id] {
			out[id] = Price{USD: *p, Change24h: v["usd_24h_change"]}
		}
	}
	return out, nil
}

// refusedAsRejected turns a refused key into adapters.ErrRejected, whatever
// status CoinGecko chose for it.
func refusedAsRejected(err error) error {
	if keyRefused(err) {
		return fmt.Errorf("%w: %w", adapters.ErrRejected, err)
	}
	return err
}
