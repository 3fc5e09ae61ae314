package coingecko

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

type byCurrency map[string]*float64

func (m byCurrency) usd() *float64 { return m["usd"] }

// coinDetail is the part of GET /coins/{id} the coin tool reads.
type coinDetail struct {
	ID            string            `json:"id"`
	Symbol        string            `json:"symbol"`
	Name          string            `json:"name"`
	Categories    []string          `json:"categories"`
	Platforms     map[string]string `json:"platforms"`
	MarketCapRank *int              `json:"market_cap_rank"`
	MarketData    struct {
		CurrentPrice      byCurrency        `json:"current_price"`
		MarketCap         byCurrency        `json:"market_cap"`
		FDV               byCurrency        `json:"fully_diluted_valuation"`
		TotalVolume       byCurrency        `json:"total_volume"`
		High24h           byCurrency        `json:"high_24h"`
		Low24h            byCurrency        `json:"low_24h"`
		ATH               byCurrency        `json:"ath"`
		ATHDate           map[string]string `json:"ath_date"`
		ATL               byCurrency        `json:"atl"`
		ATLDate           map[string]string `json:"atl_date"`
		Change24h         *float64          `json:"price_change_percentage_24h"`
		Change7d          *float64          `json:"price_change_percentage_7d"`
		Change30d         *float64          `json:"price_change_percentage_30d"`
		Change1y          *float64          `json:"price_change_percentage_1y"`
		CirculatingSupply *float64          `json:"circulating_supply"`
		TotalSupply       *float64          `json:"total_supply"`
		MaxSupply         *float64          `json:"max_supply"`
		LastUpdated       string            `json:"last_updated"`
	} `json:"market_data"`
}

// Contract addresses beyond this many are counted, not listed.
const maxContracts = 10

// coin: GET /coins/{id} without tickers, localization, community, developer
// data or sparkline; one field per line.
func coin(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	id, err := coinID(in.ID)
	if err != nil {
		return "", err
	}
	q := url.Values{
		"localization": {"false"}, "tickers": {"false"}, "market_data": {"true"},
		"community_data": {"false"}, "developer_data": {"false"}, "sparkline": {"false"},
	}
	var d coinDetail
	if err := get(ctx, c, coinPath(id, ""), q, &d); err != nil {
		return "", err
	}
	m := d.MarketData
	t := adapters.NewTable("field", "value")
	t.Add("id", d.ID)
	t.Add("symbol", d.Symbol)
	t.Add("name", d.Name)
	t.Add("market_cap_rank", rank(d.MarketCapRank))
	t.Add("price_usd", num(m.CurrentPrice.usd()))
	t.Add("change_24h_pct", num(m.Change24h))
	t.Add("change_7d_pct", num(m.Change7d))
	t.Add("change_30d_pct", num(m.Change30d))
	t.Add("change_1y_pct", num(m.Change1y))
	t.Add("high_24h_usd", num(m.High24h.usd()))
	t.Add("low_24h_usd", num(m.Low24h.usd()))
	t.Add("market_cap_usd", num(m.MarketCap.usd()))
	t.Add("fdv_usd", num(m.FDV.usd()))
	t.Add("volume_24h_usd", num(m.TotalVolume.usd()))
	t.Add("ath_usd", num(m.ATH.usd()))
	t.Add("ath_date", m.ATHDate["usd"])
	t.Add("atl_usd", num(m.ATL.usd()))
	t.Add("atl_date", m.ATLDate["usd"])
	t.Add("circulating_supply", num(m.CirculatingSupply))
	t.Add("total_supply", num(m.TotalSupply))
	t.Add("max_supply", num(m.MaxSupply))
	t.Add("last_updated", m.LastUpdated)
	if len(d.Categories) > 0 {
		t.Add("categories", strings.Join(d.Categories, ", "))
	}
	platforms := make([]string, 0, len(d.Platforms))
	for p, addr := range d.Platforms {
		if p != "" && addr != "" {
			platforms = append(platforms, p)
		}
	}
	sort.Strings(platforms)
	for i, p := range platforms {
		if i == maxContracts {
			t.Add("contracts_not_listed", len(platforms)-maxContracts)
			break
		}
		t.Add("contract_"+p, d.Platforms[p])
	}
	return t.String(), nil
}

// prices: GET /simple/price for the given ids, in one quote currency. An id
// CoinGecko does not quote gets a row with empty values.
func prices(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error) {
	var in struct {
		IDs        []string `json:"ids"`
		VsCurrency string   `json:"vs_currency"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return "", err
	}
	if len(in.IDs) == 0 {
		return "", errors.New("ids is empty: give at least one CoinGecko coin id")
	}
	if len(in.IDs) > adapters.MaxRows {
		return "", fmt.Errorf("at most %d ids per call (got %d)", adapters.MaxRows, len(in.IDs))
	}
	cur, err := vsCurrency(in.VsCurrency)
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(in.IDs))
	seen := map[string]bool{}
	for _, raw := range in.IDs {
		id, err := coinID(raw)
		if err != nil {
			return "", err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	q := url.Values{
		"ids": {strings.Join(ids, ",")}, "vs_currencies": {cur},
		"include_market_cap": {"true"}, "include_24hr_vol": {"true"},
		"include_24hr_change": {"true"}, "include_last_updated_at": {"true"},
	}
	var out map[string]map[string]*float64
	if err := get(ctx, c, "/simple/price", q, &out); err != nil {
		return "", err
	}
	if len(out) == 0 {
		return "", fmt.Errorf("CoinGecko quotes none of %s (find coin ids with search)", strings.Join(ids, ", "))
	}
	quoted := false
	for _, v := range out {
		if _, ok := v[cur]; ok {
			quoted = true
			break
		}
	}
	if !quoted {
		return "", fmt.Errorf("CoinGecko does not quote in %q", cur)
	}
	t := adapters.NewTable("id", "price_"+cur, "market_cap_"+cur, "volume_24h_"+cur, "change_24h_pct", "last_updated")
	for _, id := range ids {
		v, ok := out[id]
		if !ok {
			t.Add(id, "", "", "", "", "")
			continue
		}
		updated := ""
		if u := v["last_updated_at"]; u != nil {
			updated = unixTime(int64(*u))
		}
		t.Add(id, num(v[cur]), num(v[cur+"_market_cap"]), num(v[cur+"_24h_vol"]), num(v[cur+"_24h_change"]), updated)
	}
	return t.String(), nil
}
