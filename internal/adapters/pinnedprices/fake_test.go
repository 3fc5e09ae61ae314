package pinnedprices_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const (
	goodKey = "CG-pinned-secret-5e1d"
	demoKey = "CG-demo-secret-8c2f" // a Demo key, which the Pro host refuses
)

// fakeGecko answers /ping, /search and /simple/price as CoinGecko Pro does:
// the key in x-cg-pro-api-key, its error bodies, and quotes only for the
// ids it knows.
type fakeGecko struct {
	*httptest.Server
	mu      sync.Mutex
	queries map[string]string
}

func newFakeGecko(t testing.TB) *fakeGecko {
	f := &fakeGecko{queries: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
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

var known = map[string]string{
	"bitcoin":       `{"usd":67187.3361,"usd_24h_change":3.6361}`,
	"ethereum":      `{"usd":3521.4,"usd_24h_change":-1.2447}`,
	"pepe":          `{"usd":0.00001234,"usd_24h_change":12.05}`,
	"tesla-xstock":  `{"usd":251.9}`,
	"delisted-coin": `{}`,
}

func (f *fakeGecko) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.queries[r.URL.Path] = r.URL.RawQuery
	f.mu.Unlock()
	switch r.Header.Get("x-cg-pro-api-key") {
	case goodKey:
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
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/ping":
		_, _ = w.Write([]byte(`{"gecko_says":"(V3) To the Moon!"}`))
	case "/search":
		f.search(w, r.URL.Query().Get("query"))
	case "/simple/price":
		q := r.URL.Query()
		if q.Get("vs_currencies") != "usd" {
			geckoError(w, http.StatusBadRequest, 0, "vs_currencies")
			return
		}
		parts := []string{}
		for _, id := range strings.Split(q.Get("ids"), ",") {
			if v, ok := known[id]; ok {
				parts = append(parts, fmt.Sprintf("%q:%s", id, v))
			}
		}
		_, _ = w.Write([]byte("{" + strings.Join(parts, ",") + "}"))
	default:
		http.NotFound(w, r)
	}
}

// search answers like /search: coins with thumbs and ranks, plus the
// exchanges, categories and NFTs the adapter drops. "many" matches 30 coins.
func (f *fakeGecko) search(w http.ResponseWriter, query string) {
	type coin struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		APISymbol     string `json:"api_symbol"`
		Symbol        string `json:"symbol"`
		MarketCapRank *int   `json:"market_cap_rank"`
		Thumb         string `json:"thumb"`
		Large         string `json:"large"`
	}
	one := 1
	var coins []coin
	switch query {
	case "bitcoin":
		coins = []coin{{ID: "bitcoin", Name: "Bitcoin", APISymbol: "bitcoin", Symbol: "BTC", MarketCapRank: &one,
			Thumb: "https://coin-images.example/bitcoin/thumb.png", Large: "https://coin-images.example/bitcoin/large.png"},
			{ID: "wrapped-bitcoin", Name: "Wrapped Bitcoin", APISymbol: "wrapped-bitcoin", Symbol: "WBTC"}}
	case "many":
		for i := range 30 {
			coins = append(coins, coin{ID: fmt.Sprintf("coin-%d", i), Name: fmt.Sprintf("Coin %d", i), Symbol: fmt.Sprintf("C%d", i)})
		}
	}
	json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
		"coins":      coins,
		"exchanges":  []map[string]any{{"id": "binance", "name": "Binance", "market_type": "spot"}},
		"icos":       []any{},
		"categories": []map[string]any{{"id": "bitcoin-ecosystem", "name": "Bitcoin Ecosystem"}},
		"nfts":       []any{},
	})
}
