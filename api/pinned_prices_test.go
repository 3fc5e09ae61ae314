package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/connections/connectionstest"
)

const pinnedKey = "CG-pinned-api-secret-31c7"

// fakePinnedGecko answers /ping, /search and /simple/price as CoinGecko Pro
// does, for one valid key (a search for "ether" finds Ethereum, any other
// the two Bitcoins): a wrong key gets CoinGecko's 10002 error body.
func fakePinnedGecko(t *testing.T) string {
	quotes := map[string]string{
		"bitcoin":      `{"usd":67187.3361,"usd_24h_change":3.6361}`,
		"ethereum":     `{"usd":3521.4,"usd_24h_change":-1.2447}`,
		"tesla-xstock": `{"usd":251.9}`,
	}
	return newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("x-cg-pro-api-key") != pinnedKey {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":{"error_code":10002,"error_message":"Incorrect API Key"}}`))
			return
		}
		switch r.URL.Path {
		case "/ping":
			_, _ = w.Write([]byte(`{"gecko_says":"(V3) To the Moon!"}`))
		case "/search":
			if r.URL.Query().Get("query") == "ether" {
				_, _ = w.Write([]byte(`{"coins":[{"id":"ethereum","name":"Ethereum","api_symbol":"ethereum","symbol":"ETH","market_cap_rank":2}]}`))
				return
			}
			json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
				"coins": []map[string]any{
					{"id": "bitcoin", "name": "Bitcoin", "api_symbol": "bitcoin", "symbol": "BTC", "market_cap_rank": 1, "thumb": "https://img.example/btc.png"},
					{"id": "wrapped-bitcoin", "name": "Wrapped Bitcoin", "api_symbol": "wrapped-bitcoin", "symbol": "WBTC", "market_cap_rank": 20},
				},
				"exchanges": []map[string]any{{"id": "binance", "name": "Binance"}}, "categories": []any{}, "nfts": []any{},
			})
		case "/simple/price":
			var parts []string
			for _, id := range strings.Split(r.URL.Query().Get("ids"), ",") {
				if q, ok := quotes[id]; ok {
					parts = append(parts, fmt.Sprintf("%q:%s", id, q))
				}
			}
			_, _ = w.Write([]byte("{" + strings.Join(parts, ",") + "}"))
		default:
			http.NotFound(w, r)
		}
	}))
}

// usePinnedGecko points the catalog's Pinned prices row at the fake service.
func usePinnedGecko(t *testing.T, me *mcpEnv) {
	t.Helper()
	addServer(t, me.DB, "pinned_prices", fakePinnedGecko(t), "token", `{"adapter":"pinned_prices"}`)
	if _, err := me.DB.Exec(context.Background(), `UPDATE mcp_servers SET kind = 'adapter' WHERE slug = 'pinned_prices'`); err != nil {
		t.Fatal(err)
	}
}

func coinIDs(t *testing.T, body []byte) string {
	t.Helper()
	var coins []struct{ ID, Symbol, Name string }
	if err := json.Unmarshal(body, &coins); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	ids := make([]string, len(coins))
	for i, c := range coins {
		ids[i] = c.ID
	}
	return strings.Join(ids, ",")
}

func noKeyIn(t *testing.T, what string, body []byte) {
	t.Helper()
	if strings.Contains(string(body), pinnedKey) {
		t.Errorf("%s carries the key: %s", what, body)
	}
}

func TestPinnedPricesConnectSearchAndReplace(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	usePinnedGecko(t, me)
	org, guild, _ := me.Hierarchy()
	op := me.Operator(org)

	// The picker searches with the pasted key before Connect.
	r := me.Do(op, "POST", "/api/mcp/pinned-prices/search", map[string]any{"key": pinnedKey, "query": "bitcoin"})
	if r.Status != 200 || coinIDs(t, r.Body) != "bitcoin,wrapped-bitcoin" {
		t.Fatalf("search with key: %d %s", r.Status, r.Body)
	}
	noKeyIn(t, "search", r.Body)
	if r := me.Do(op, "POST", "/api/mcp/pinned-prices/search", map[string]any{"key": "CG-wrong-key", "query": "bitcoin"}); r.Status != 422 || r.ErrorCode() != "key_rejected" {
		t.Fatalf("search with a wrong key: %d %s", r.Status, r.Body)
	}
	if r := me.Do(op, "POST", "/api/mcp/pinned-prices/search", map[string]any{"query": "bitcoin"}); r.Status != 422 {
		t.Fatalf("search without a key: %d %s", r.Status, r.Body)
	}

	connect := func(scope, owner, key string, coins ...string) (int, map[string]any, []byte) {
		list := make([]map[string]string, len(coins))
		for i, id := range coins {
			list[i] = map[string]string{"id": id, "symbol": strings.ToUpper(id[:3]), "name": id}
		}
		body := map[string]any{"slug": "pinned_prices", "owner_scope": scope, "owner_id": owner, "key": key}
		if coins != nil {
			body["coins"] = list
		}
		r := me.Do(op, "POST", "/api/mcp/connect", body)
		noKeyIn(t, "connect", r.Body)
		var m map[string]any
		json.Unmarshal(r.Body, &m) //nolint:errcheck
		return r.Status, m, r.Body
	}
	nothingLeft := func(what string) {
		t.Helper()
		if n := connectionstest.Count(t, me.DB) + me.Count("connection_credentials") + me.Count("pinned_coins") + me.Count("bindings"); n != 0 {
			t.Fatalf("%s left %d rows", what, n)
		}
	}

	// An id CoinGecko does not quote refuses the whole login.
	st, m, body := connect("organisation", org, pinnedKey, "bitcoin", "not-a-real-coin", "ethereum")
	if st != 422 {
		t.Fatalf("unquoted coin: %d %s", st, body)
	}
	problems, _ := m["error"].(map[string]any)["problems"].([]any)
	if len(problems) != 1 || problems[0].(map[string]any)["field"] != "coins[1].id" {
		t.Fatalf("problems %s", body)
	}
	nothingLeft("an unquoted coin")
	if st, m, body = connect("organisation", org, "CG-wrong-key", "bitcoin"); st != 422 || m["error"].(map[string]any)["code"] != "key_rejected" {
		t.Fatalf("wrong key: %d %s", st, body)
	}
	nothingLeft("a refused key")
	if st, _, body = connect("organisation", org, pinnedKey); st != 422 || !strings.Contains(string(body), `"coins"`) {
		t.Fatalf("no coins: %d %s", st, body)
	}
	nothingLeft("a login without coins")

	st, m, body = connect("organisation", org, pinnedKey, "ethereum", "bitcoin")
	if st != 200 || m["tools"] != float64(0) {
		t.Fatalf("connect: %d %s", st, body)
	}
	orgConn := m["connection"].(map[string]any)
	if orgConn["status"] != "connected" {
		t.Fatalf("connection %v", orgConn)
	}
	id := orgConn["id"].(string)
	r = me.Do(op, "GET", "/api/mcp/connections/"+id+"/pinned-prices", nil)
	if r.Status != 200 || coinIDs(t, r.Body) != "ethereum,bitcoin" || !strings.Contains(string(r.Body), `"symbol":"ETH"`) {
		t.Fatalf("coins: %d %s", r.Status, r.Body)
	}
	r = me.Do(op, "GET", "/api/mcp/connections/"+id+"/pinned-prices/search?q=bitcoin", nil)
	if r.Status != 200 || coinIDs(t, r.Body) != "bitcoin,wrapped-bitcoin" {
		t.Fatalf("search with the stored key: %d %s", r.Status, r.Body)
	}
	noKeyIn(t, "stored search", r.Body)

	// PUT replaces the list; a refused list changes nothing.
	put := func(coins ...map[string]any) (int, []byte) {
		r := me.Do(op, "PUT", "/api/mcp/connections/"+id+"/pinned-prices", map[string]any{"coins": coins})
		noKeyIn(t, "put", r.Body)
		return r.Status, r.Body
	}
	coin := func(id string) map[string]any { return map[string]any{"id": id, "symbol": "x", "name": id} }
	if st, body := put(coin("tesla-xstock"), coin("Bitcoin")); st != 200 || coinIDs(t, body) != "tesla-xstock,bitcoin" {
		t.Fatalf("replace: %d %s", st, body)
	}
	many := make([]map[string]any, 21)
	for i := range many {
		many[i] = coin(fmt.Sprintf("coin-%d", i))
	}
	for name, list := range map[string][]map[string]any{
		"unquoted":  {coin("bitcoin"), coin("no-such-coin")},
		"duplicate": {coin("bitcoin"), coin("BITCOIN")},
		"empty":     {},
		"too many":  many,
	} {
		if st, body := put(list...); st != 422 {
			t.Errorf("%s: %d %s", name, st, body)
		}
	}
	if r := me.Do(op, "GET", "/api/mcp/connections/"+id+"/pinned-prices", nil); coinIDs(t, r.Body) != "tesla-xstock,bitcoin" {
		t.Fatalf("a refused PUT changed the list: %s", r.Body)
	}

	// A guild login of its own keeps its own list; the organisation's is untouched.
	st, m, body = connect("guild", guild, pinnedKey, "bitcoin")
	if st != 200 {
		t.Fatalf("guild connect: %d %s", st, body)
	}
	gid := m["connection"].(map[string]any)["id"].(string)
	if r := me.Do(op, "GET", "/api/mcp/connections/"+gid+"/pinned-prices", nil); coinIDs(t, r.Body) != "bitcoin" {
		t.Fatalf("guild list: %s", r.Body)
	}
	if r := me.Do(op, "GET", "/api/mcp/connections/"+id+"/pinned-prices", nil); coinIDs(t, r.Body) != "tesla-xstock,bitcoin" {
		t.Fatalf("org list after the guild's connect: %s", r.Body)
	}

	// The key is sealed, not stored in the clear.
	var plain int
	if err := me.DB.QueryRow(context.Background(), `SELECT count(*) FROM connection_credentials WHERE position(convert_to($1, 'UTF8') in ciphertext) > 0`, pinnedKey).Scan(&plain); err != nil || plain != 0 {
		t.Fatalf("key stored in the clear: %d %v", plain, err)
	}
}

func TestPinnedPricesRefusals(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	usePinnedGecko(t, me)
	org, _, _ := me.Hierarchy()
	op := me.Operator(org)
	r := me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "pinned_prices", "owner_scope": "organisation", "owner_id": org,
		"key": pinnedKey, "coins": []map[string]string{{"id": "bitcoin", "symbol": "btc", "name": "Bitcoin"}}})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)

	// Another organisation's operator sees none of it.
	other := me.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).Map()["id"].(string)
	stranger := me.Operator(other)
	for _, probe := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/mcp/connections/" + id + "/pinned-prices", nil},
		{"GET", "/api/mcp/connections/" + id + "/pinned-prices/search?q=bitcoin", nil},
		{"PUT", "/api/mcp/connections/" + id + "/pinned-prices", map[string]any{"coins": []map[string]string{{"id": "ethereum"}}}},
	} {
		if r := me.Do(stranger, probe.method, probe.path, probe.body); r.Status != 404 || strings.Contains(string(r.Body), "bitcoin") {
			t.Errorf("%s %s by another organisation: %d %s", probe.method, probe.path, r.Status, r.Body)
		}
	}

	// coins belong to Pinned prices only, and its routes to its logins only.
	echo := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	addServer(t, me.DB, "echoer", echo, "token", `{"adapter":"test_echo"}`)
	if _, err := me.DB.Exec(context.Background(), `UPDATE mcp_servers SET kind = 'adapter' WHERE slug = 'echoer'`); err != nil {
		t.Fatal(err)
	}
	r = me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "echoer", "owner_scope": "organisation", "owner_id": org,
		"key": "ek-1-0123456789", "coins": []map[string]string{{"id": "bitcoin"}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"coins"`) {
		t.Fatalf("coins on another server: %d %s", r.Status, r.Body)
	}
	if n := connectionstest.Count(t, me.DB); n != 1 {
		t.Fatalf("the refused connect left a login: %d", n)
	}
	r = me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "echoer", "owner_scope": "organisation", "owner_id": org, "key": "ek-1-0123456789"})
	if r.Status != 200 {
		t.Fatalf("echo connect: %d %s", r.Status, r.Body)
	}
	echoID := r.Map()["connection"].(map[string]any)["id"].(string)
	for _, method := range []string{"GET", "PUT"} {
		r := me.Do(op, method, "/api/mcp/connections/"+echoID+"/pinned-prices", map[string]any{"coins": []map[string]string{{"id": "bitcoin"}}})
		if r.Status != 422 || r.ErrorCode() != "not_pinned_prices" {
			t.Errorf("%s on another server's login: %d %s", method, r.Status, r.Body)
		}
	}
	if r := me.Do(op, "GET", "/api/mcp/connections/"+id+"/pinned-prices/search", nil); r.Status != 422 {
		t.Errorf("search without q: %d %s", r.Status, r.Body)
	}
}
