package coingecko

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

func rank(r *int) string {
	if r == nil {
		return ""
	}
	return strconv.Itoa(*r)
}

// search: GET /search (coins only; exchanges, categories and NFTs dropped).
func search(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", errors.New("query is empty: give a coin name or symbol")
	}
	var out struct {
		Coins []struct {
			ID            string `json:"id"`
			Name          string `json:"name"`
			Symbol        string `json:"symbol"`
			MarketCapRank *int   `json:"market_cap_rank"`
		} `json:"coins"`
	}
	if err := get(ctx, c, "/search", url.Values{"query": {q}}, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("id", "symbol", "name", "market_cap_rank")
	for i, co := range out.Coins {
		if i == adapters.Rows(in.Limit) {
			break
		}
		t.Add(co.ID, co.Symbol, co.Name, rank(co.MarketCapRank))
	}
	return t.String(), nil
}

// new: GET /coins/list/new, newest first as CoinGecko sends them.
func newCoins(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Limit int `json:"limit"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	var out []struct {
		ID          string `json:"id"`
		Symbol      string `json:"symbol"`
		Name        string `json:"name"`
		ActivatedAt int64  `json:"activated_at"`
	}
	if err := get(ctx, c, "/coins/list/new", nil, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("id", "symbol", "name", "listed_at")
	for i, co := range out {
		if i == adapters.Rows(in.Limit) {
			break
		}
		t.Add(co.ID, co.Symbol, co.Name, unixTime(co.ActivatedAt))
	}
	return t.String(), nil
}

// The durations /coins/top_gainers_losers takes.
var moverDurations = []string{"1h", "24h", "7d", "14d", "30d", "60d", "1y"}

// movers: GET /coins/top_gainers_losers in usd; limit rows of each side.
func movers(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Duration string `json:"duration"`
		Limit    int    `json:"limit"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	d := strings.ToLower(strings.TrimSpace(in.Duration))
	if d == "" {
		d = "24h"
	}
	valid := false
	for _, v := range moverDurations {
		valid = valid || v == d
	}
	if !valid {
		return "", fmt.Errorf("duration %q is not one of %s", in.Duration, strings.Join(moverDurations, ", "))
	}
	var out struct {
		Gainers []map[string]json.RawMessage `json:"top_gainers"`
		Losers  []map[string]json.RawMessage `json:"top_losers"`
	}
	if err := get(ctx, c, "/coins/top_gainers_losers", url.Values{"vs_currency": {"usd"}, "duration": {d}}, &out); err != nil {
		return "", err
	}
	change := "usd_" + d + "_change"
	t := adapters.NewTable("side", "id", "symbol", "name", "market_cap_rank", "price_usd", "volume_24h_usd", "change_"+d+"_pct")
	n := adapters.Rows(in.Limit)
	for _, side := range []struct {
		name string
		rows []map[string]json.RawMessage
	}{{"gainer", out.Gainers}, {"loser", out.Losers}} {
		for i, r := range side.rows {
			if i == n {
				break
			}
			t.Add(side.name, text(r["id"]), text(r["symbol"]), text(r["name"]), number(r["market_cap_rank"]),
				number(r["usd"]), number(r["usd_24h_vol"]), number(r[change]))
		}
	}
	return t.String(), nil
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func number(raw json.RawMessage) string {
	var f flexNum
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil {
		return ""
	}
	return f.String()
}

// trending: GET /search/trending, coins only (NFTs and categories dropped).
func trending(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Limit int `json:"limit"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	var out struct {
		Coins []struct {
			Item struct {
				ID            string `json:"id"`
				Name          string `json:"name"`
				Symbol        string `json:"symbol"`
				MarketCapRank *int   `json:"market_cap_rank"`
				Data          struct {
					Price       flexNum    `json:"price"`
					Change24h   byCurrency `json:"price_change_percentage_24h"`
					MarketCap   flexNum    `json:"market_cap"`
					TotalVolume flexNum    `json:"total_volume"`
				} `json:"data"`
			} `json:"item"`
		} `json:"coins"`
	}
	if err := get(ctx, c, "/search/trending", nil, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("trend_rank", "id", "symbol", "name", "market_cap_rank", "price_usd", "change_24h_pct", "market_cap_usd", "volume_24h_usd")
	for i, co := range out.Coins {
		if i == adapters.Rows(in.Limit) {
			break
		}
		it := co.Item
		t.Add(i+1, it.ID, it.Symbol, it.Name, rank(it.MarketCapRank), it.Data.Price.String(),
			num(it.Data.Change24h.usd()), it.Data.MarketCap.String(), it.Data.TotalVolume.String())
	}
	return t.String(), nil
}
