package coingecko_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const (
	goodKey  = "CG-pro-secret-7f3a9c"
	basicKey = "CG-basic-secret-11aa" // a valid key whose plan lacks the paid endpoints
	demoKey  = "CG-demo-secret-22bb"  // a Demo key, which the Pro host refuses
)

// fakeGecko speaks the CoinGecko Pro wire format for the endpoints the
// adapter uses: the key in x-cg-pro-api-key, JSON answers shaped like the
// service's (images, descriptions and all), and its error bodies.
type fakeGecko struct {
	*httptest.Server
	mu      sync.Mutex
	queries map[string]string // path -> last raw query
}

func newFakeGecko(t testing.TB) *fakeGecko {
	f := &fakeGecko{queries: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGecko) asked(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.queries[path]
	return ok
}

func (f *fakeGecko) lastQuery(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[path]
}

func geckoError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"status":{"error_code":%d,"error_message":%q}}`, code, msg)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

var paidPaths = map[string]bool{"/coins/list/new": true, "/coins/top_gainers_losers": true}

func (f *fakeGecko) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.queries[r.URL.Path] = r.URL.RawQuery
	f.mu.Unlock()
	switch key := r.Header.Get("x-cg-pro-api-key"); key {
	case goodKey:
	case basicKey:
		if paidPaths[r.URL.Path] || strings.HasSuffix(r.URL.Path, "/circulating_supply_chart") {
			geckoError(w, http.StatusUnauthorized, 10005, "This request is limited to PRO API subscribers. Upgrade your plan.")
			return
		}
	case demoKey:
		geckoError(w, http.StatusBadRequest, 10011, "If you are using Demo API key, please change your root URL from pro-api.coingecko.com to api.coingecko.com")
		return
	case "":
		geckoError(w, http.StatusUnauthorized, 10002, "API Key Missing")
		return
	default:
		geckoError(w, http.StatusUnauthorized, 10002, "Incorrect API Key")
		return
	}
	q := r.URL.Query()
	p := r.URL.Path
	switch {
	case p == "/ping":
		writeJSON(w, map[string]string{"gecko_says": "(V3) To the Moon!"})
	case p == "/search":
		f.search(w, q.Get("query"))
	case p == "/simple/price":
		f.simplePrice(w, strings.Split(q.Get("ids"), ","), q.Get("vs_currencies"))
	case p == "/coins/list/new":
		var out []map[string]any
		for i := 0; i < 200; i++ {
			out = append(out, map[string]any{"id": fmt.Sprintf("fresh-%d", i), "symbol": fmt.Sprintf("fr%d", i),
				"name": fmt.Sprintf("Fresh %d", i), "activated_at": 1712562430 - i*60})
		}
		writeJSON(w, out)
	case p == "/coins/top_gainers_losers":
		f.movers(w, q.Get("duration"))
	case p == "/search/trending":
		f.trending(w)
	case p == "/coins/rate-limited":
		geckoError(w, http.StatusTooManyRequests, 429, "You've exceeded the Rate Limit.")
	case p == "/coins/usd-coin":
		platforms := map[string]string{}
		for i := 0; i < 12; i++ {
			platforms[fmt.Sprintf("chain-%02d", i)] = fmt.Sprintf("0x%040d", i)
		}
		writeJSON(w, map[string]any{"id": "usd-coin", "symbol": "usdc", "name": "USDC", "platforms": platforms,
			"market_cap_rank": 7, "market_data": map[string]any{"current_price": map[string]any{"usd": 0.999987}}})
	case strings.HasPrefix(p, "/coins/bitcoin"):
		f.bitcoin(w, strings.TrimPrefix(p, "/coins/bitcoin"), q)
	case strings.HasPrefix(p, "/coins/"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"coin not found"}`)) //nolint:errcheck
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeGecko) search(w http.ResponseWriter, query string) {
	n := 3
	if query == "many" {
		n = 40
	}
	coins := []map[string]any{}
	for i := 0; i < n; i++ {
		coins = append(coins, map[string]any{"id": fmt.Sprintf("%s-%d", query, i), "name": fmt.Sprintf("%s %d", query, i),
			"api_symbol": fmt.Sprintf("%s-%d", query, i), "symbol": strings.ToUpper(query), "market_cap_rank": i + 1,
			"thumb": "https://coin-images.coingecko.com/coins/images/1/thumb/x.png",
			"large": "https://coin-images.coingecko.com/coins/images/1/large/x.png"})
	}
	coins[len(coins)-1]["market_cap_rank"] = nil
	writeJSON(w, map[string]any{"coins": coins,
		"exchanges":  []map[string]any{{"id": "binance", "name": "Binance", "market_type": "spot", "thumb": "t", "large": "l"}},
		"icos":       []any{},
		"categories": []map[string]any{{"id": "layer-1", "name": "Layer 1 (L1)"}},
		"nfts":       []map[string]any{{"id": "punks", "name": "CryptoPunks", "symbol": "PUNK", "thumb": "t"}}})
}

func (f *fakeGecko) simplePrice(w http.ResponseWriter, ids []string, vs string) {
	known := map[string]float64{"bitcoin": 67187.3384, "ethereum": 3452.119, "usd-coin": 0.999987}
	out := map[string]map[string]any{}
	for _, id := range ids {
		price, ok := known[id]
		if !ok {
			continue
		}
		entry := map[string]any{"last_updated_at": 1711356300}
		if vs == "usd" || vs == "eur" {
			entry[vs] = price
			entry[vs+"_market_cap"] = price * 19675268.12
			entry[vs+"_24h_vol"] = 16408802301.84
			entry[vs+"_24h_change"] = 3.6379
		}
		out[id] = entry
	}
	writeJSON(w, out)
}

func (f *fakeGecko) movers(w http.ResponseWriter, duration string) {
	side := func(prefix string, sign float64) []map[string]any {
		var out []map[string]any
		for i := 0; i < 30; i++ {
			out = append(out, map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "symbol": prefix[:1] + strconv.Itoa(i),
				"name": fmt.Sprintf("%s %d", prefix, i), "image": "https://coin-images.coingecko.com/coins/images/68469/original/x.png",
				"market_cap_rank": 500 + i, "usd": 0.11185590814980959, "usd_24h_vol": 37605963.6544256,
				"usd_" + duration + "_change": sign * (97.50734564945273 - float64(i)),
				"usd_1h_change":               -0.17390830639913413, "usd_1y_change": nil})
		}
		return out
	}
	writeJSON(w, map[string]any{"top_gainers": side("up", 1), "top_losers": side("down", -1)})
}

func (f *fakeGecko) trending(w http.ResponseWriter) {
	var coins []map[string]any
	for i := 0; i < 15; i++ {
		coins = append(coins, map[string]any{"item": map[string]any{
			"id": fmt.Sprintf("hot-%d", i), "coin_id": 28470 + i, "name": fmt.Sprintf("Hot %d", i), "symbol": fmt.Sprintf("HOT%d", i),
			"market_cap_rank": 100 + i, "thumb": "https://assets.coingecko.com/coins/images/28470/thumb/x.png",
			"small": "s", "large": "l", "slug": fmt.Sprintf("hot-%d", i), "price_btc": 3.3e-07, "score": i,
			"data": map[string]any{"price": 0.0234567891, "price_btc": "0.000000330", "market_cap": "$1,234,567,890",
				"market_cap_btc": "18234.1", "total_volume": "$98,765,432", "total_volume_btc": "1456.2",
				"sparkline":                   "https://www.coingecko.com/coins/28470/sparkline.svg",
				"price_change_percentage_24h": map[string]float64{"usd": 12.3456789, "eur": 12.1},
				"content":                     map[string]string{"title": "What is Hot?", "description": "<p>Long text</p>"}},
		}})
	}
	writeJSON(w, map[string]any{"coins": coins, "nfts": []map[string]any{{"id": "nft-1", "name": "NFT"}},
		"categories": []map[string]any{{"id": 1, "name": "Meme"}}})
}

func (f *fakeGecko) bitcoin(w http.ResponseWriter, rest string, q map[string][]string) {
	days, _ := strconv.Atoi(first(q["days"]))
	switch rest {
	case "":
		if first(q["tickers"]) != "false" || first(q["localization"]) != "false" {
			http.Error(w, "the adapter asked for bulk", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(bitcoinJSON)) //nolint:errcheck
	case "/market_chart":
		n := days * 288
		var prices, caps, vols [][2]float64
		for i := 0; i < n; i++ {
			ts := float64(1711843200000 + int64(i)*300000)
			prices = append(prices, [2]float64{ts, 69000 + float64(i)})
			caps = append(caps, [2]float64{ts, 1.35e12 + float64(i)})
			vols = append(vols, [2]float64{ts, 2.1e10})
		}
		writeJSON(w, map[string]any{"prices": prices, "market_caps": caps, "total_volumes": vols})
	case "/circulating_supply_chart":
		var pts [][2]any
		for i := 0; i < days*24; i++ {
			pts = append(pts, [2]any{1712448000000 + int64(i)*3600000, fmt.Sprintf("%.1f", 19675268.0+float64(i))})
		}
		writeJSON(w, map[string]any{"circulating_supply": pts})
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"Not Found"}`)) //nolint:errcheck
	}
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// bitcoinJSON is a trimmed /coins/bitcoin answer, bulk fields kept so the
// test sees them dropped.
const bitcoinJSON = `{
 "id": "bitcoin", "symbol": "btc", "name": "Bitcoin", "web_slug": "bitcoin",
 "asset_platform_id": null,
 "platforms": {"": ""},
 "detail_platforms": {"": {"decimal_place": null, "contract_address": ""}},
 "block_time_in_minutes": 10, "hashing_algorithm": "SHA-256",
 "categories": ["Cryptocurrency", "Layer 1 (L1)"],
 "description": {"en": "Bitcoin is the first successful internet money based on peer-to-peer technology; <a href=\"https://www.coingecko.com/en\">more</a>"},
 "links": {"homepage": ["http://www.bitcoin.org"], "blockchain_site": ["https://mempool.space/"]},
 "image": {"thumb": "https://coin-images.coingecko.com/coins/images/1/thumb/bitcoin.png", "large": "https://coin-images.coingecko.com/coins/images/1/large/bitcoin.png"},
 "genesis_date": "2009-01-03", "market_cap_rank": 1,
 "market_data": {
  "current_price": {"usd": 70057.12345678, "eur": 64678.1},
  "ath": {"usd": 73738, "eur": 67405}, "ath_change_percentage": {"usd": -4.9921},
  "ath_date": {"usd": "2024-03-14T07:10:36.635Z"},
  "atl": {"usd": 67.81}, "atl_date": {"usd": "2013-07-06T00:00:00.000Z"},
  "market_cap": {"usd": 1379992347614.3}, "market_cap_rank": 1,
  "fully_diluted_valuation": {"usd": 1472112400000},
  "total_volume": {"usd": 18403848232.4},
  "high_24h": {"usd": 70478}, "low_24h": {"usd": 69185},
  "price_change_percentage_24h": 0.7432, "price_change_percentage_7d": 3.12345678,
  "price_change_percentage_30d": -1.5, "price_change_percentage_1y": 143.9,
  "total_supply": 21000000.0, "max_supply": 21000000.0, "circulating_supply": 19675987.0,
  "sparkline_7d": {"price": [1, 2, 3]},
  "last_updated": "2024-04-07T15:24:51.021Z"
 },
 "community_data": {"twitter_followers": 6310507},
 "tickers": [{"base": "BTC", "target": "USDT", "market": {"name": "Binance"}}],
 "last_updated": "2024-04-07T15:24:51.021Z"
}`
