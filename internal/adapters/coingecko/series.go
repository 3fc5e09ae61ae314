package coingecko

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/guilds/guilds/internal/adapters"
)

// daysArg is a days argument: def when absent, an error below 1.
func daysArg(days *int, def int) (int, error) {
	if days == nil {
		return def, nil
	}
	if *days < 1 {
		return 0, fmt.Errorf("days must be 1 or more (got %d)", *days)
	}
	return *days, nil
}

// supply: GET /coins/{id}/circulating_supply_chart, cut to SeriesPoints.
func supply(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		ID   string `json:"id"`
		Days *int   `json:"days"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	id, err := coinID(in.ID)
	if err != nil {
		return "", err
	}
	days, err := daysArg(in.Days, 30)
	if err != nil {
		return "", err
	}
	var out struct {
		Supply []point `json:"circulating_supply"`
	}
	if err := get(ctx, c, coinPath(id, "/circulating_supply_chart"), url.Values{"days": {strconv.Itoa(days)}}, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("time", "circulating_supply")
	for _, p := range adapters.Downsample(out.Supply, adapters.SeriesPoints) {
		t.Add(msTime(p.ms), p.value.String())
	}
	return t.String(), nil
}

// chart: GET /coins/{id}/market_chart in usd, cut to SeriesPoints; market
// cap and volume join the price at the same timestamp.
func chart(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		ID   string `json:"id"`
		Days *int   `json:"days"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	id, err := coinID(in.ID)
	if err != nil {
		return "", err
	}
	days, err := daysArg(in.Days, 1)
	if err != nil {
		return "", err
	}
	var out struct {
		Prices     []point `json:"prices"`
		MarketCaps []point `json:"market_caps"`
		Volumes    []point `json:"total_volumes"`
	}
	q := url.Values{"vs_currency": {"usd"}, "days": {strconv.Itoa(days)}}
	if err := get(ctx, c, coinPath(id, "/market_chart"), q, &out); err != nil {
		return "", err
	}
	caps, vols := byTime(out.MarketCaps), byTime(out.Volumes)
	t := adapters.NewTable("time", "price_usd", "market_cap_usd", "volume_24h_usd")
	for _, p := range adapters.Downsample(out.Prices, adapters.SeriesPoints) {
		t.Add(msTime(p.ms), p.value.String(), caps[p.ms].String(), vols[p.ms].String())
	}
	return t.String(), nil
}

func byTime(ps []point) map[int64]flexNum {
	m := make(map[int64]flexNum, len(ps))
	for _, p := range ps {
		m[p.ms] = p.value
	}
	return m
}

// point is one [unix ms, value] pair of a chart.
type point struct {
	ms    int64
	value flexNum
}

func (p *point) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("not a [time, value] pair: %s", b)
	}
	var ms float64
	if err := json.Unmarshal(pair[0], &ms); err != nil {
		return fmt.Errorf("chart time: %w", err)
	}
	p.ms = int64(ms)
	return json.Unmarshal(pair[1], &p.value)
}

func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04Z")
}
