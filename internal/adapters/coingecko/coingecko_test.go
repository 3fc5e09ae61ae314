package coingecko_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/coingecko"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(base, key string) adapters.Conn {
	return adapters.Conn{HTTP: http.DefaultClient, BaseURL: base, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool and fails the test if the key shows up in what comes back.
func call(t *testing.T, c adapters.Conn, tool, args string) (string, error) {
	t.Helper()
	out, err := coingecko.Adapter{}.Call(context.Background(), c, tool, json.RawMessage(args))
	noKey(t, c.Cred.AccessToken, out, err)
	return out, err
}

func noKey(t *testing.T, key, out string, err error) {
	t.Helper()
	if strings.TrimSpace(key) == "" {
		return
	}
	if strings.Contains(out, key) || (err != nil && strings.Contains(err.Error(), key)) {
		t.Fatalf("the key leaked: out=%q err=%v", out, err)
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestRegistered(t *testing.T) {
	a, ok := adapters.Lookup("coingecko")
	if !ok || a.Name() != coingecko.Name {
		t.Fatalf("lookup: %v %v", a, ok)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	ctx := context.Background()
	a := coingecko.Adapter{}

	if hint, err := a.Check(ctx, conn(f.URL, goodKey)); err != nil || hint != "" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	if !f.asked("/ping") {
		t.Fatal("/ping was not asked")
	}
	for name, key := range map[string]string{"wrong": "CG-wrong-secret-999", "demo": demoKey, "empty": " "} {
		_, err := a.Check(ctx, conn(f.URL, key))
		if !errors.Is(err, adapters.ErrRejected) {
			t.Fatalf("%s key: %v", name, err)
		}
		noKey(t, key, "", err)
	}
	// A plan without the paid endpoints still passes /ping.
	if _, err := a.Check(ctx, conn(f.URL, basicKey)); err != nil {
		t.Fatalf("basic plan key: %v", err)
	}

	// The service answers 5xx: not a rejection.
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	}))
	defer broken.Close()
	if _, err := a.Check(ctx, conn(broken.URL, goodKey)); err == nil || errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("503: %v", err)
	}

	// The service is down: an error that is not a rejection, without the key.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	_, err := a.Check(ctx, conn(downURL, goodKey))
	if err == nil || errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("down: %v", err)
	}
	noKey(t, goodKey, "", err)
}

func TestSearch(t *testing.T) {
	t.Parallel()
	c := conn(newFakeGecko(t).URL, goodKey)
	out, err := call(t, c, "search", `{"query":"pepe"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "id\tsymbol\tname\tmarket_cap_rank\npepe-0\tPEPE\tpepe 0\t1\npepe-1\tPEPE\tpepe 1\t2\npepe-2\tPEPE\tpepe 2\t\n"
	if out != want {
		t.Fatalf("search:\n%s", out)
	}
	if strings.Contains(out, "http") || strings.Contains(out, "Binance") || strings.Contains(out, "CryptoPunks") {
		t.Fatalf("bulk in the answer:\n%s", out)
	}
	for args, rows := range map[string]int{`{"query":"many"}`: 15, `{"query":"many","limit":4}`: 4, `{"query":"many","limit":500}`: 30} {
		out, err := call(t, c, "search", args)
		if err != nil || len(lines(out)) != rows+1 {
			t.Fatalf("%s: %d lines, %v", args, len(lines(out)), err)
		}
	}
	if _, err := call(t, c, "search", `{"query":"  "}`); err == nil {
		t.Fatal("an empty query was sent")
	}
}

func TestCoin(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	c := conn(f.URL, goodKey)
	out, err := call(t, c, "coin", `{"id":"bitcoin"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"field\tvalue\n", "id\tbitcoin\n", "name\tBitcoin\n", "market_cap_rank\t1\n",
		"price_usd\t70057\n", "change_7d_pct\t3.12346\n", "market_cap_usd\t1379992347614\n",
		"max_supply\t21000000\n", "ath_date\t2024-03-14T07:10:36.635Z\n", "categories\tCryptocurrency, Layer 1 (L1)\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	for _, bulk := range []string{"http", "<a", "peer-to-peer", "Binance", "eur", "contract_", "6310507"} {
		if strings.Contains(out, bulk) {
			t.Fatalf("bulk %q in:\n%s", bulk, out)
		}
	}
	q := f.lastQuery("/coins/bitcoin")
	for _, want := range []string{"tickers=false", "localization=false", "community_data=false", "developer_data=false", "sparkline=false"} {
		if !strings.Contains(q, want) {
			t.Fatalf("query %q lacks %s", q, want)
		}
	}

	// Contract addresses, by platform, up to ten.
	out, err = call(t, c, "coin", `{"id":"usd-coin"}`)
	if err != nil || !strings.Contains(out, "\ncontract_chain-00\t0x0000000000000000000000000000000000000000\n") ||
		!strings.Contains(out, "\ncontract_chain-09\t") || strings.Contains(out, "contract_chain-10") ||
		!strings.HasSuffix(out, "\ncontracts_not_listed\t2\n") || !strings.Contains(out, "\nprice_usd\t0.999987\n") {
		t.Fatalf("usd-coin: %v\n%s", err, out)
	}

	_, err = call(t, c, "coin", `{"id":"no-such-coin"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "search") {
		t.Fatalf("unknown coin: %v", err)
	}
	if _, err := call(t, c, "coin", `{"id":"../ping"}`); err == nil || !strings.Contains(err.Error(), "not a CoinGecko coin id") {
		t.Fatalf("bad id: %v", err)
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	c := conn(f.URL, goodKey)
	out, err := call(t, c, "prices", `{"ids":["bitcoin","Ethereum","not-a-coin","bitcoin"]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "id\tprice_usd\tmarket_cap_usd\tvolume_24h_usd\tchange_24h_pct\tlast_updated\n" +
		"bitcoin\t67187\t1321928897289\t16408802302\t3.6379\t2024-03-25T08:45Z\n" +
		"ethereum\t3452\t67921366907\t16408802302\t3.6379\t2024-03-25T08:45Z\n" +
		"not-a-coin\t\t\t\t\t\n"
	if out != want {
		t.Fatalf("prices:\n%s\nwant:\n%s", out, want)
	}
	if q := f.lastQuery("/simple/price"); !strings.Contains(q, "ids=bitcoin%2Cethereum%2Cnot-a-coin&") ||
		!strings.Contains(q, "include_24hr_change=true") {
		t.Fatalf("query %q", q)
	}
	out, err = call(t, c, "prices", `{"ids":["usd-coin"],"vs_currency":"EUR"}`)
	if err != nil || !strings.HasPrefix(out, "id\tprice_eur\t") || !strings.Contains(out, "usd-coin\t0.999987\t") {
		t.Fatalf("eur: %q %v", out, err)
	}
	for args, msg := range map[string]string{
		`{"ids":["nope-1","nope-2"]}`:             "quotes none of nope-1, nope-2",
		`{"ids":["bitcoin"],"vs_currency":"xyz"}`: `does not quote in "xyz"`,
		`{"ids":["bitcoin"],"vs_currency":"u s"}`: "not a quote currency",
		`{"ids":[]}`: "ids is empty",
	} {
		if _, err := call(t, c, "prices", args); err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: %v", args, err)
		}
	}
	ids := make([]string, 31)
	for i := range ids {
		ids[i] = "bitcoin"
	}
	many, _ := json.Marshal(map[string]any{"ids": ids})
	if _, err := call(t, c, "prices", string(many)); err == nil || !strings.Contains(err.Error(), "at most 30") {
		t.Fatalf("31 ids: %v", err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	c := conn(newFakeGecko(t).URL, goodKey)
	out, err := call(t, c, "new", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	l := lines(out)
	if len(l) != 16 || l[0] != "id\tsymbol\tname\tlisted_at" || l[1] != "fresh-0\tfr0\tFresh 0\t2024-04-08T07:47Z" {
		t.Fatalf("new:\n%s", out)
	}
	if out, err := call(t, c, "new", `{"limit":99}`); err != nil || len(lines(out)) != 31 {
		t.Fatalf("limit 99: %d %v", len(lines(out)), err)
	}
	if out, err := call(t, c, "new", ``); err != nil || len(lines(out)) != 16 {
		t.Fatalf("no args: %v", err)
	}
}

func TestMovers(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	c := conn(f.URL, goodKey)
	out, err := call(t, c, "movers", `{"duration":"7d","limit":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "side\tid\tsymbol\tname\tmarket_cap_rank\tprice_usd\tvolume_24h_usd\tchange_7d_pct\n" +
		"gainer\tup-0\tu0\tup 0\t500\t0.111856\t37605964\t97.5073\n" +
		"gainer\tup-1\tu1\tup 1\t501\t0.111856\t37605964\t96.5073\n" +
		"loser\tdown-0\td0\tdown 0\t500\t0.111856\t37605964\t-97.5073\n" +
		"loser\tdown-1\td1\tdown 1\t501\t0.111856\t37605964\t-96.5073\n"
	if out != want {
		t.Fatalf("movers:\n%s", out)
	}
	if q := f.lastQuery("/coins/top_gainers_losers"); !strings.Contains(q, "duration=7d") || !strings.Contains(q, "vs_currency=usd") {
		t.Fatalf("query %q", q)
	}
	if out, err := call(t, c, "movers", `{}`); err != nil || len(lines(out)) != 31 || !strings.HasSuffix(lines(out)[0], "change_24h_pct") {
		t.Fatalf("default: %d lines %v", len(lines(out)), err)
	}
	if _, err := call(t, c, "movers", `{"duration":"3w"}`); err == nil || !strings.Contains(err.Error(), "1h, 24h, 7d") {
		t.Fatalf("bad duration: %v", err)
	}
}

func TestSupplyDownsampled(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	c := conn(f.URL, goodKey)
	out, err := call(t, c, "supply", `{"id":"bitcoin","days":10}`)
	if err != nil {
		t.Fatal(err)
	}
	l := lines(out)
	if len(l) != adapters.SeriesPoints+1 || l[0] != "time\tcirculating_supply" ||
		l[1] != "2024-04-07T00:00Z\t19675268" || l[len(l)-1] != "2024-04-16T23:00Z\t19675507" {
		t.Fatalf("supply (%d lines):\n%s", len(l), out)
	}
	if q := f.lastQuery("/coins/bitcoin/circulating_supply_chart"); q != "days=10" {
		t.Fatalf("query %q", q)
	}
	if out, err := call(t, c, "supply", `{"id":"bitcoin","days":1}`); err != nil || len(lines(out)) != 25 {
		t.Fatalf("one day: %d lines %v", len(lines(out)), err)
	}
	if _, err := call(t, c, "supply", `{"id":"bitcoin"}`); err != nil || f.lastQuery("/coins/bitcoin/circulating_supply_chart") != "days=30" {
		t.Fatalf("default days: %v", err)
	}
}

func TestChartDownsampled(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	c := conn(f.URL, goodKey)
	out, err := call(t, c, "chart", `{"id":"bitcoin"}`)
	if err != nil {
		t.Fatal(err)
	}
	l := lines(out)
	if len(l) != adapters.SeriesPoints+1 || l[0] != "time\tprice_usd\tmarket_cap_usd\tvolume_24h_usd" ||
		l[1] != "2024-03-31T00:00Z\t69000\t1350000000000\t21000000000" || l[len(l)-1] != "2024-03-31T23:55Z\t69287\t1350000000287\t21000000000" {
		t.Fatalf("chart (%d lines):\n%s", len(l), out)
	}
	if q := f.lastQuery("/coins/bitcoin/market_chart"); !strings.Contains(q, "days=1") || !strings.Contains(q, "vs_currency=usd") {
		t.Fatalf("query %q", q)
	}
	if _, err := call(t, c, "chart", `{"id":"bitcoin","days":0}`); err == nil || !strings.Contains(err.Error(), "days must be 1 or more") {
		t.Fatalf("days 0: %v", err)
	}
}

func TestTrending(t *testing.T) {
	t.Parallel()
	c := conn(newFakeGecko(t).URL, goodKey)
	out, err := call(t, c, "trending", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	l := lines(out)
	if len(l) != 16 ||
		l[0] != "trend_rank\tid\tsymbol\tname\tmarket_cap_rank\tprice_usd\tchange_24h_pct\tmarket_cap_usd\tvolume_24h_usd" ||
		l[1] != "1\thot-0\tHOT0\tHot 0\t100\t0.0234568\t12.3457\t1234567890\t98765432" {
		t.Fatalf("trending:\n%s", out)
	}
	for _, bulk := range []string{"http", "<p>", "NFT", "Meme", "What is"} {
		if strings.Contains(out, bulk) {
			t.Fatalf("bulk %q in:\n%s", bulk, out)
		}
	}
}

func TestErrorAnswers(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	ctx := context.Background()

	if _, err := call(t, conn(f.URL, goodKey), "portfolio", `{}`); err == nil || !strings.Contains(err.Error(), `"portfolio"`) {
		t.Fatalf("unknown tool: %v", err)
	}

	// A plan without the endpoint: a plain error naming the plan, not a
	// refused key (that would tell the operator to connect again).
	for _, tool := range []string{"new", "movers", "supply"} {
		args := `{"id":"bitcoin"}`
		_, err := call(t, conn(f.URL, basicKey), tool, args)
		var he *adapters.HTTPError
		if err == nil || !strings.Contains(err.Error(), "Analyst plan") || !strings.Contains(err.Error(), tool) || errors.As(err, &he) {
			t.Fatalf("%s on a basic plan: %v", tool, err)
		}
	}

	// A refused key is an HTTPError the pool reports as a refused login.
	for _, key := range []string{"CG-wrong-secret-999", demoKey} {
		_, err := call(t, conn(f.URL, key), "trending", `{}`)
		var he *adapters.HTTPError
		if !errors.As(err, &he) || !he.Refused() {
			t.Fatalf("refused key %s: %v", key, err)
		}
	}

	if _, err := call(t, conn(f.URL, goodKey), "coin", `{"id":"rate-limited"}`); err == nil || !strings.Contains(err.Error(), "rate limit") {
		t.Fatalf("429: %v", err)
	}
	if _, err := call(t, conn(f.URL, goodKey), "search", `{"query":1}`); err == nil || !strings.Contains(err.Error(), "invalid arguments") {
		t.Fatalf("bad arguments: %v", err)
	}
	if _, err := (coingecko.Adapter{}).Call(ctx, conn(f.URL, ""), "trending", nil); err == nil || !strings.Contains(err.Error(), "no stored key") {
		t.Fatalf("no key: %v", err)
	}
}
