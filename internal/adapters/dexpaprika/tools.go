package dexpaprika

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/adapters"
)

// maxPrices is how many addresses one prices request may carry.
const maxPrices = 10

func search(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Query string  `json:"query"`
		Limit float64 `json:"limit"`
	}
	if err := decode(args, &in); err != nil {
		return "", err
	}
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", errors.New("query is required")
	}
	var out searchAnswer
	if err := a.get(ctx, c, "/search", url.Values{"query": {q}}, &out); err != nil {
		return "", err
	}
	n := share(rows(in.Limit), len(out.Tokens), len(out.Pools), len(out.Dexes))
	t := adapters.NewTable("kind", "network", "address", "name", "symbol", "price_usd", "volume_usd", "change_24h_pct")
	for _, tk := range out.Tokens[:n[0]] {
		t.Add("token", tk.Chain, tk.ID, tk.Name, tk.Symbol, tk.PriceUSD, tk.VolumeUSD, tk.PriceUSDChange)
	}
	for _, p := range out.Pools[:n[1]] {
		t.Add("pool", p.Chain, p.ID, p.DexName, pair(p.Tokens), p.PriceUSD, p.VolumeUSD, nil)
	}
	for _, d := range out.Dexes[:n[2]] {
		t.Add("dex", d.Chain, firstOf(d.ID, d.DexID), firstOf(d.Name, d.DexName), nil, nil, nil, nil)
	}
	return t.String(), nil
}

// share splits n rows between lists in turn, so that one long list cannot
// crowd out the others.
func share(n int, sizes ...int) []int {
	got := make([]int, len(sizes))
	for more := true; n > 0 && more; {
		more = false
		for i := range sizes {
			if n > 0 && got[i] < sizes[i] {
				got[i]++
				n--
				more = true
			}
		}
	}
	return got
}

type located struct {
	Network string `json:"network"`
	Address string `json:"address"`
}

func (l located) check() (nw, addr string, err error) {
	if nw, err = network(l.Network); err != nil {
		return "", "", err
	}
	addr, err = address("address", l.Address)
	return nw, addr, err
}

func token(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in located
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, addr, err := in.check()
	if err != nil {
		return "", err
	}
	var tk tokenAnswer
	if err := a.get(ctx, c, "/networks/"+nw+"/tokens/"+url.PathEscape(addr), nil, &tk); err != nil {
		return "", notFound(err)
	}
	s := tk.Summary
	t := adapters.NewTable("network", "address", "name", "symbol", "price_usd", "change_24h_pct", "volume_24h_usd",
		"txns_24h", "liquidity_usd", "fdv_usd", "pools", "total_supply", "decimals", "added_at", "last_updated")
	t.Add(firstOf(tk.Chain, nw), firstOf(tk.ID, addr), tk.Name, tk.Symbol, s.PriceUSD, s.Day.LastPriceUSDChange, s.Day.VolumeUSD,
		s.Day.Txns, s.LiquidityUSD, s.FDV, s.Pools, tk.TotalSupply, tk.Decimals, tk.AddedAt, tk.LastUpdated)
	return t.String(), nil
}

func prices(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Network   string   `json:"network"`
		Addresses []string `json:"addresses"`
	}
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, err := network(in.Network)
	if err != nil {
		return "", err
	}
	var addrs []string
	seen := map[string]bool{}
	for _, raw := range in.Addresses {
		addr, err := address("address", raw)
		if err != nil {
			return "", err
		}
		if k := strings.ToLower(addr); !seen[k] {
			seen[k] = true
			addrs = append(addrs, addr)
		}
	}
	switch {
	case len(addrs) == 0:
		return "", errors.New("addresses needs at least one token address")
	case len(addrs) > maxPrices:
		return "", fmt.Errorf("prices takes at most %d addresses per call, got %d", maxPrices, len(addrs))
	}
	var out priceAnswer
	if err := a.get(ctx, c, "/networks/"+nw+"/multi/prices", url.Values{"tokens": {strings.Join(addrs, ",")}}, &out); err != nil {
		return "", notFound(err)
	}
	byAddr := make(map[string]int, len(out))
	for i, p := range out {
		byAddr[strings.ToLower(p.ID)] = i
	}
	// One row per requested address, in order; an address the service did
	// not price keeps an empty price so the model sees which one failed.
	t := adapters.NewTable("address", "price_usd", "last_updated")
	for _, addr := range addrs {
		if i, ok := byAddr[strings.ToLower(addr)]; ok {
			t.Add(addr, out[i].PriceUSD, out[i].LastUpdated)
		} else {
			t.Add(addr, nil, nil)
		}
	}
	return t.String(), nil
}

func pool(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in located
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, addr, err := in.check()
	if err != nil {
		return "", err
	}
	var p poolAnswer
	if err := a.get(ctx, c, "/networks/"+nw+"/pools/"+url.PathEscape(addr), nil, &p); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("network", "pool", "dex", "tokens", "price_usd", "price", "change_1h_pct", "change_24h_pct",
		"volume_24h_usd", "txns_24h", "buys_24h", "sells_24h", "fee", "created_at", "price_time")
	t.Add(firstOf(p.Chain, nw), firstOf(p.ID, addr), p.DexName, pair(p.Tokens), p.LastPriceUSD, p.LastPrice,
		p.Hour.LastPriceUSDChange, p.Day.LastPriceUSDChange, p.Day.VolumeUSD, p.Day.Txns, p.Day.Buys, p.Day.Sells,
		p.Fee, p.CreatedAt, p.PriceTime)
	return t.String(), nil
}

func pools(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		Network string  `json:"network"`
		Token   string  `json:"token"`
		Limit   float64 `json:"limit"`
	}
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, err := network(in.Network)
	if err != nil {
		return "", err
	}
	n := rows(in.Limit)
	q := url.Values{"limit": {strconv.Itoa(n)}, "order_by": {"volume_usd_24h"}, "sort": {"desc"}}
	if strings.TrimSpace(in.Token) != "" {
		tk, err := address("token", in.Token)
		if err != nil {
			return "", err
		}
		q.Set("token_address", tk)
	}
	var out poolsAnswer
	if err := a.get(ctx, c, "/networks/"+nw+"/pools/search", q, &out); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("pool", "dex", "tokens", "price_usd", "change_24h_pct", "volume_24h_usd", "liquidity_usd", "txns_24h", "created_at")
	for _, p := range out.Results[:min(n, len(out.Results))] {
		t.Add(p.ID, p.DexName, pair(p.Tokens), p.PriceUSD, p.PriceChangePercentage24h, p.VolumeUSD24h, p.LiquidityUSD,
			p.Transactions24h, p.CreatedAt)
	}
	return t.String(), nil
}

func ohlcv(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		located
		Interval string `json:"interval"`
		Start    string `json:"start"`
	}
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, addr, err := in.check()
	if err != nil {
		return "", err
	}
	iv, step, err := interval(in.Interval)
	if err != nil {
		return "", err
	}
	now := a.now().UTC()
	from, err := start(in.Start, now)
	if err != nil {
		return "", err
	}
	q := url.Values{
		"start":    {from.UTC().Format(time.RFC3339)},
		"interval": {iv},
		"limit":    {strconv.Itoa(candles(from, now, step))},
	}
	var out []candle
	if err := a.get(ctx, c, "/networks/"+nw+"/pools/"+url.PathEscape(addr)+"/ohlcv", q, &out); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("time", "open", "high", "low", "close", "volume")
	for _, k := range adapters.Downsample(out, adapters.SeriesPoints) {
		t.Add(k.TimeOpen, k.Open, k.High, k.Low, k.Close, k.Volume)
	}
	return t.String(), nil
}

func swaps(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		located
		Limit float64 `json:"limit"`
	}
	if err := decode(args, &in); err != nil {
		return "", err
	}
	nw, addr, err := in.check()
	if err != nil {
		return "", err
	}
	n := rows(in.Limit)
	var out swapsAnswer
	if err := a.get(ctx, c, "/networks/"+nw+"/pools/"+url.PathEscape(addr)+"/transactions", url.Values{"limit": {strconv.Itoa(n)}}, &out); err != nil {
		return "", notFound(err)
	}
	t := adapters.NewTable("time", "token_0", "amount_0", "token_1", "amount_1", "value_usd", "sender", "tx")
	for _, s := range out.Transactions[:min(n, len(out.Transactions))] {
		t.Add(s.CreatedAt, firstOf(s.Token0Symbol, s.Token0), s.Amount0, firstOf(s.Token1Symbol, s.Token1), s.Amount1,
			swapValue(s.Volume0, s.Price0USD, s.Volume1, s.Price1USD), s.Sender, s.ID)
	}
	return t.String(), nil
}

// swapValue is the USD size of a swap from whichever side is priced.
func swapValue(vol0, price0, vol1, price1 num) any {
	for _, side := range [][2]num{{vol0, price0}, {vol1, price1}} {
		v, ok1 := side[0].float()
		p, ok2 := side[1].float()
		if ok1 && ok2 && p > 0 {
			if v < 0 {
				v = -v
			}
			return strconv.FormatFloat(v*p, 'f', 2, 64)
		}
	}
	return nil
}
