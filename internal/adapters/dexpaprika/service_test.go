package dexpaprika_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	freeKey = "dp_free_5ecr3t_0001"
	proKey  = "dp_pro_5ecr3t_0002"
	usdc    = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
	weth    = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
	ethPool = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640"
)

// service is a fake DexPaprika host speaking its wire format. A key it does
// not know is served as keyless, as the real service does; a scheme word in
// front of the key is a 401. Swaps need a paid plan, and the public host sends
// a pro key's swaps to the paid host with a 403.
type service struct {
	*httptest.Server
	pro bool // the paid host: only the pro key is served here

	mu       sync.Mutex
	requests []*http.Request
}

func newService(t testing.TB, pro bool) *service {
	s := &service{pro: pro}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *service) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

func (s *service) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func raw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (s *service) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(r.Context()))
	s.mu.Unlock()

	authz := r.Header.Get("Authorization")
	if strings.Contains(authz, " ") {
		raw(w, http.StatusUnauthorized, `{"error":"unauthorized","message":"invalid authorization header"}`)
		return
	}
	plan := map[string]string{freeKey: "free", proKey: "pro"}[authz]
	if plan == "" {
		plan = "keyless"
	}
	if s.pro && plan != "pro" {
		raw(w, http.StatusForbidden, `{"error":"wrong_host","message":"use api.dexpaprika.com"}`)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/usage":
		writeJSON(w, 200, map[string]any{"plan": plan})
	case r.URL.Path == "/search":
		searchAnswer(w, q.Get("query"))
	case len(parts) >= 2 && parts[0] == "networks" && parts[1] != "ethereum":
		raw(w, http.StatusNotFound, `{"error":"not_found","message":"network not found"}`)
	case len(parts) == 4 && parts[2] == "tokens":
		if parts[3] != usdc {
			raw(w, http.StatusNotFound, `{"error":"not_found","message":"token not found"}`)
			return
		}
		raw(w, 200, tokenJSON)
	case len(parts) == 4 && parts[2] == "multi" && parts[3] == "prices":
		var out []map[string]any
		for _, a := range strings.Split(q.Get("tokens"), ",") {
			if a == usdc || a == weth {
				out = append(out, map[string]any{"id": a, "chain": "ethereum", "price_usd": map[string]float64{usdc: 0.9998, weth: 3456.78}[a], "last_updated": "2026-09-28T13:06:30Z"})
			}
		}
		writeJSON(w, 200, out)
	case len(parts) == 4 && parts[2] == "pools" && parts[3] == "search":
		poolsAnswer(w, q)
	case len(parts) == 4 && parts[2] == "pools":
		raw(w, 200, poolJSON)
	case len(parts) == 5 && parts[2] == "pools" && parts[4] == "ohlcv":
		ohlcvAnswer(w, q)
	case len(parts) == 5 && parts[2] == "pools" && parts[4] == "transactions":
		if plan == "pro" && !s.pro {
			raw(w, http.StatusForbidden, `{"error":"wrong_host","message":"use api-pro.dexpaprika.com"}`)
			return
		}
		if plan == "keyless" || plan == "free" {
			raw(w, http.StatusForbidden, `{"error":"plan_required","tier":"`+plan+`","message":"this endpoint requires a Dev or Pro plan","required_tier":"dev","links":{"pricing":"https://dexpaprika.com/api/pricing"}}`)
			return
		}
		swapsAnswer(w)
	default:
		raw(w, http.StatusNotFound, `{"error":"not_found"}`)
	}
}

func searchAnswer(w http.ResponseWriter, query string) {
	var tokens, pools []map[string]any
	for i := range 20 {
		tokens = append(tokens, map[string]any{"id": fmt.Sprintf("0xtoken%02d", i), "name": "USD Coin " + strconv.Itoa(i), "symbol": strings.ToUpper(query),
			"chain": "ethereum", "decimals": 6, "price_usd": 1.0001, "volume_usd": 123456.5, "price_usd_change": -0.02,
			"description": "A long description the adapter must drop.", "website": "https://example.com", "has_image": true})
	}
	for i := range 3 {
		pools = append(pools, map[string]any{"id": fmt.Sprintf("0xpool%02d", i), "dex_id": "uniswap_v3", "dex_name": "Uniswap V3", "chain": "ethereum",
			"volume_usd": 9.5e6, "price_usd": 1.0002, "created_at": "2021-05-05T21:42:11Z",
			"tokens": []map[string]any{{"id": usdc, "symbol": "USDC", "has_image": true}, {"id": weth, "symbol": "WETH"}}})
	}
	writeJSON(w, 200, map[string]any{"tokens": tokens, "pools": pools,
		"dexes": []map[string]any{{"id": "uniswap_v3", "name": "Uniswap V3", "chain": "ethereum", "pools_count": 12000, "website": "https://uniswap.org"}}})
}

const tokenJSON = `{"id":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","name":"USD Coin","symbol":"USDC","chain":"ethereum","decimals":6,
"total_supply":4.6e10,"description":"USDC is a fully collateralized US dollar stablecoin.\nLong text.","website":"https://www.circle.com",
"explorer":"https://etherscan.io/token/0xa0b8","has_image":true,"added_at":"2018-09-10T21:56:37Z",
"summary":{"chain":"ethereum","id":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","price_usd":0.9998,"fdv":46000000000,"liquidity_usd":512345678.9,"pools":4210,
"24h":{"volume":1.2e9,"volume_usd":1.2e9,"sells":51000,"buys":49000,"txns":100000,"buy_usd":6e8,"sell_usd":6e8,"last_price_usd_change":-0.01},
"1h":{"volume_usd":5e7,"txns":4000,"last_price_usd_change":0.001}},"last_updated":"2026-09-28T13:06:30Z"}`

const poolJSON = `{"id":"0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640","created_at_block_number":12376729,"chain":"ethereum","created_at":"2021-05-05T21:42:11Z",
"factory_id":"0x1f98431c8ad98523631ae4a59f267346ea31f984","dex_id":"uniswap_v3","dex_name":"Uniswap V3",
"tokens":[{"id":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","name":"USD Coin","symbol":"USDC","chain":"ethereum","decimals":6,"description":"drop me","website":"https://www.circle.com"},
{"id":"0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2","name":"Wrapped Ether","symbol":"WETH","chain":"ethereum","decimals":18}],
"last_price":0.000289,"last_price_usd":0.9998,"fee":500,"price_time":"2026-09-28T13:06:00Z",
"24h":{"last_price_usd_change":-0.02,"volume_usd":250000000.5,"buy_usd":1.2e8,"sell_usd":1.3e8,"sells":2100,"buys":1900,"txns":4000},
"1h":{"last_price_usd_change":0.004,"volume_usd":1e7,"buy_usd":5e6,"sell_usd":5e6,"sells":90,"buys":80,"txns":170}}`

func poolsAnswer(w http.ResponseWriter, q url.Values) {
	n, _ := strconv.Atoi(q.Get("limit"))
	if n <= 0 {
		n = 10
	}
	var results []map[string]any
	for i := range n {
		results = append(results, map[string]any{"id": fmt.Sprintf("0xpool%03d", i), "dex_id": "uniswap_v3", "dex_name": "Uniswap V3", "chain": "ethereum",
			"volume_usd_24h": 1.5e7 - float64(i), "created_at": "2021-05-05T21:42:11Z", "created_at_block_number": 12376729, "transactions_24h": 289,
			"price_usd": 0.9995787501356217, "price_change_percentage_5m": nil, "price_change_percentage_1h": 0.024, "price_change_percentage_24h": 0.007,
			"fee": nil, "volume_usd_7d": 3.1e7, "volume_usd_30d": 1.3e8, "liquidity_usd": 7407910.088430515,
			"tokens": []map[string]any{{"id": usdc, "chain": "ethereum", "has_image": true}, {"id": weth, "chain": "ethereum", "has_image": true}}})
	}
	writeJSON(w, 200, map[string]any{"results": results, "has_next_page": true, "next_cursor": "eyJjaGFpbiI6ImV0aGVyZXVtIn0",
		"query": map[string]any{"network": "ethereum", "limit": n, "order_by": q.Get("order_by")}})
}

func ohlcvAnswer(w http.ResponseWriter, q url.Values) {
	from, err := time.Parse(time.RFC3339, q.Get("start"))
	if err != nil {
		raw(w, http.StatusBadRequest, `{"error":"invalid start"}`)
		return
	}
	step := map[string]time.Duration{"10m": 10 * time.Minute, "1h": time.Hour, "24h": 24 * time.Hour}[q.Get("interval")]
	if step == 0 {
		raw(w, http.StatusBadRequest, `{"error":"invalid interval"}`)
		return
	}
	n, _ := strconv.Atoi(q.Get("limit"))
	if n <= 0 {
		n = 1
	}
	out := make([]map[string]any, n)
	for i := range n {
		open := from.Add(time.Duration(i) * step)
		out[i] = map[string]any{"time_open": open.Format(time.RFC3339), "time_close": open.Add(step).Format(time.RFC3339),
			"open": 100 + float64(i), "high": 101 + float64(i), "low": 99 + float64(i), "close": 100.5 + float64(i), "volume": 1000 + i}
	}
	writeJSON(w, 200, out)
}

// swapsAnswer ignores the limit, so the adapter's own cap is tested.
func swapsAnswer(w http.ResponseWriter) {
	var txs []map[string]any
	for i := range 40 {
		txs = append(txs, map[string]any{"id": fmt.Sprintf("0xtx%03d", i), "log_index": 12, "transaction_index": 3, "pool_id": ethPool,
			"sender": "0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad", "recipient": "0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad",
			"token_0": usdc, "token_1": weth, "token_0_symbol": "USDC", "token_1_symbol": "WETH",
			"amount_0": "-2500.5", "amount_1": 0.7234, "volume_0": 2500.5, "volume_1": 0.7234, "price_0": 0.000289, "price_1": 3456.2,
			"price_0_usd": 0.9998, "price_1_usd": 3456.78, "created_at_block_number": 20900000 + i, "created_at": "2026-09-28T13:06:30Z",
			"chain": "ethereum", "factory_id": "0x1f98", "canonical_chain": true})
	}
	writeJSON(w, 200, map[string]any{"transactions": txs, "page_info": map[string]any{"limit": 10, "page": 0}})
}
