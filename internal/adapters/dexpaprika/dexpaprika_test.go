package dexpaprika_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/dexpaprika"
	"github.com/guilds/guilds/internal/connectors"
)

var clock = time.Date(2026, 9, 28, 13, 0, 0, 0, time.UTC)

type fixture struct {
	pub, pro *service
	a        *dexpaprika.Adapter
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{pub: newService(t, false), pro: newService(t, true)}
	f.a = newFixtureAdapter()
	f.a.ProURL = f.pro.URL
	return f
}

func newFixtureAdapter() *dexpaprika.Adapter {
	return &dexpaprika.Adapter{Now: func() time.Time { return clock }}
}

func (f fixture) conn(key string) adapters.Conn {
	return adapters.Conn{BaseURL: f.pub.URL, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool and fails the test if the key leaks into its answer.
func (f fixture) call(t *testing.T, key, tool, args string) (string, error) {
	t.Helper()
	out, err := f.a.Call(context.Background(), f.conn(key), tool, json.RawMessage(args))
	noKey(t, out, err, key)
	return out, err
}

func noKey(t *testing.T, out string, err error, key string) {
	t.Helper()
	if strings.Contains(out, key) || (err != nil && strings.Contains(err.Error(), key)) {
		t.Fatalf("the key leaked: %q %v", out, err)
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestRegistered(t *testing.T) {
	a, ok := adapters.Lookup("dexpaprika")
	if !ok || a.Name() != "dexpaprika" {
		t.Fatalf("not registered: %v", adapters.Registered())
	}
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	hint, err := f.a.Check(ctx, f.conn(freeKey))
	if err != nil || hint != "plan free" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	if got := f.pub.last().Header.Get("Authorization"); got != freeKey || f.pub.last().URL.Path != "/usage" {
		t.Fatalf("sent %s with Authorization %q", f.pub.last().URL.Path, got)
	}
	for name, key := range map[string]string{
		"unknown key served as keyless": "dp_unknown_key",
		"scheme word answered 401":      "Bearer " + freeKey,
		"empty":                         "  ",
		"header injection":              "dp\r\nX-Evil: 1",
	} {
		hint, err := f.a.Check(ctx, f.conn(key))
		if !errors.Is(err, adapters.ErrRejected) || hint != "" {
			t.Errorf("%s: %q %v", name, hint, err)
		}
		noKey(t, hint, err, key)
	}

	down := newService(t, false)
	down.Close()
	_, err = f.a.Check(ctx, adapters.Conn{BaseURL: down.URL, Cred: connectors.Credential{AccessToken: freeKey}})
	if err == nil || errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("service down: %v", err)
	}
	noKey(t, "", err, freeKey)
}

func TestSearch(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "search", `{"query":"usdc"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if rows[0] != "kind\tnetwork\taddress\tname\tsymbol\tprice_usd\tvolume_usd\tchange_24h_pct" {
		t.Fatalf("header: %q", rows[0])
	}
	// 15 rows shared out: the 3 pools and the DEX are not crowded out by 20 tokens.
	kinds := map[string]int{}
	for _, r := range rows[1:] {
		kinds[strings.Split(r, "\t")[0]]++
	}
	if len(rows) != 16 || kinds["token"] != 11 || kinds["pool"] != 3 || kinds["dex"] != 1 {
		t.Fatalf("rows %d, kinds %v", len(rows)-1, kinds)
	}
	if rows[1] != "token\tethereum\t0xtoken00\tUSD Coin 0\tUSDC\t1.0001\t123456.5\t-0.02" {
		t.Fatalf("token row: %q", rows[1])
	}
	if !strings.Contains(out, "pool\tethereum\t0xpool00\tUniswap V3\tUSDC/WETH\t1.0002\t9500000\t\n") ||
		!strings.Contains(out, "dex\tethereum\tuniswap_v3\tUniswap V3\t") {
		t.Fatalf("pool or dex rows:\n%s", out)
	}
	if strings.Contains(out, "description") || strings.Contains(out, "example.com") || strings.Contains(out, "uniswap.org") {
		t.Fatalf("bulk kept:\n%s", out)
	}
	if q := f.pub.last().URL.Query().Get("query"); q != "usdc" {
		t.Fatalf("query sent: %q", q)
	}
	out, _ = f.call(t, freeKey, "search", `{"query":"usdc","limit":100}`)
	if n := len(lines(out)) - 1; n != 24 { // 20 tokens + 3 pools + 1 dex: all fit under 30
		t.Fatalf("limit 100: %d rows", n)
	}
	if _, err := f.call(t, freeKey, "search", `{"query":"  "}`); err == nil {
		t.Fatal("an empty query was sent")
	}
}

func TestToken(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "token", `{"network":"Ethereum","address":"`+usdc+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "network\taddress\tname\tsymbol\tprice_usd\tchange_24h_pct\tvolume_24h_usd\ttxns_24h\tliquidity_usd\tfdv_usd\tpools\ttotal_supply\tdecimals\tadded_at\tlast_updated\n" +
		"ethereum\t" + usdc + "\tUSD Coin\tUSDC\t0.9998\t-0.01\t1200000000\t100000\t512345678.9\t46000000000\t4210\t46000000000\t6\t2018-09-10T21:56:37Z\t2026-09-28T13:06:30Z\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	if p := f.pub.last().URL.Path; p != "/networks/ethereum/tokens/"+usdc {
		t.Fatalf("path %s", p)
	}
	_, err = f.call(t, freeKey, "token", `{"network":"ethereum","address":"0xdead"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "check the network id") {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestUnknownNetwork(t *testing.T) {
	f := newFixture(t)
	before := f.pub.count()
	for _, args := range []string{`{"network":"eth/../x","address":"` + usdc + `"}`, `{"network":"","address":"` + usdc + `"}`} {
		if _, err := f.call(t, freeKey, "pool", args); err == nil || !strings.Contains(err.Error(), "unknown network") {
			t.Fatalf("%s: %v", args, err)
		}
	}
	if f.pub.count() != before {
		t.Fatal("a malformed network id reached the service")
	}
	_, err := f.call(t, freeKey, "pool", `{"network":"notachain","address":"`+ethPool+`"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "network not found") {
		t.Fatalf("network the service does not know: %v", err)
	}
	if _, err := f.call(t, freeKey, "pool", `{"network":"eth","address":"`+ethPool+`"}`); err != nil {
		t.Fatalf("alias eth: %v", err)
	}
	if _, err := f.call(t, freeKey, "pool", `{"network":"ethereum","address":".."}`); err == nil {
		t.Fatal("a dot segment was accepted as an address")
	}
}

func TestPrices(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "prices", `{"network":"ethereum","addresses":["`+usdc+`","0xunknown","`+weth+`","`+usdc+`"]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "address\tprice_usd\tlast_updated\n" + usdc + "\t0.9998\t2026-09-28T13:06:30Z\n0xunknown\t\t\n" + weth + "\t3456.78\t2026-09-28T13:06:30Z\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	if got := f.pub.last().URL.Query().Get("tokens"); got != usdc+",0xunknown,"+weth {
		t.Fatalf("tokens sent: %q", got)
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = `"0x` + strings.Repeat("a", i+1) + `"`
	}
	if _, err := f.call(t, freeKey, "prices", `{"network":"ethereum","addresses":[`+strings.Join(eleven, ",")+`]}`); err == nil || !strings.Contains(err.Error(), "at most 10") {
		t.Fatalf("11 addresses: %v", err)
	}
	if _, err := f.call(t, freeKey, "prices", `{"network":"ethereum","addresses":[]}`); err == nil {
		t.Fatal("no addresses was accepted")
	}
}

func TestPool(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "pool", `{"network":"ethereum","address":"`+ethPool+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "network\tpool\tdex\ttokens\tprice_usd\tprice\tchange_1h_pct\tchange_24h_pct\tvolume_24h_usd\ttxns_24h\tbuys_24h\tsells_24h\tfee\tcreated_at\tprice_time\n" +
		"ethereum\t" + ethPool + "\tUniswap V3\tUSDC/WETH\t0.9998\t0.000289\t0.004\t-0.02\t250000000.5\t4000\t1900\t2100\t500\t2021-05-05T21:42:11Z\t2026-09-28T13:06:00Z\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
}

func TestPools(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "pools", `{"network":"ethereum"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != 16 || rows[0] != "pool\tdex\ttokens\tprice_usd\tchange_24h_pct\tvolume_24h_usd\tliquidity_usd\ttxns_24h\tcreated_at" {
		t.Fatalf("%d rows, header %q", len(rows), rows[0])
	}
	// Without symbols in the answer the pair is named by address.
	if rows[1] != "0xpool000\tUniswap V3\t"+usdc+"/"+weth+"\t0.9995787501356217\t0.007\t15000000\t7407910.088430515\t289\t2021-05-05T21:42:11Z" {
		t.Fatalf("row: %q", rows[1])
	}
	q := f.pub.last().URL.Query()
	if q.Get("limit") != "15" || q.Get("order_by") != "volume_usd_24h" || q.Get("sort") != "desc" || q.Has("token_address") {
		t.Fatalf("query: %v", q)
	}
	out, _ = f.call(t, freeKey, "pools", `{"network":"ethereum","token":"`+usdc+`","limit":500}`)
	if n := len(lines(out)) - 1; n != 30 || f.pub.last().URL.Query().Get("limit") != "30" || f.pub.last().URL.Query().Get("token_address") != usdc {
		t.Fatalf("limit 500: %d rows, query %v", n, f.pub.last().URL.Query())
	}
	out, _ = f.call(t, freeKey, "pools", `{"network":"ethereum","limit":3}`)
	if n := len(lines(out)) - 1; n != 3 {
		t.Fatalf("limit 3: %d rows", n)
	}
}

func TestOHLCV(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, freeKey, "ohlcv", `{"network":"ethereum","address":"`+ethPool+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	q := f.pub.last().URL.Query()
	if q.Get("start") != "2026-09-27T13:00:00Z" || q.Get("interval") != "1h" || q.Get("limit") != "24" {
		t.Fatalf("default window: %v", q)
	}
	rows := lines(out)
	if len(rows) != 25 || rows[0] != "time\topen\thigh\tlow\tclose\tvolume" || rows[1] != "2026-09-27T13:00:00Z\t100\t101\t99\t100.5\t1000" {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	// A week of 10-minute candles: the service's 1000 at most, cut to 48.
	out, err = f.call(t, freeKey, "ohlcv", `{"network":"ethereum","address":"`+ethPool+`","interval":"10m","start":"-7d"}`)
	if err != nil {
		t.Fatal(err)
	}
	q = f.pub.last().URL.Query()
	if q.Get("start") != "2026-09-21T13:00:00Z" || q.Get("limit") != "1000" {
		t.Fatalf("week window: %v", q)
	}
	rows = lines(out)
	if len(rows) != 49 || !strings.HasPrefix(rows[1], "2026-09-21T13:00:00Z\t") || !strings.HasSuffix(rows[48], "\t1999") {
		t.Fatalf("downsampled: %d rows, first %q, last %q", len(rows)-1, rows[1], rows[len(rows)-1])
	}
	if _, err := f.call(t, freeKey, "ohlcv", `{"network":"ethereum","address":"`+ethPool+`","start":"2026-09-25","interval":"1d"}`); err != nil {
		t.Fatalf("date start, 1d: %v", err)
	}
	if q := f.pub.last().URL.Query(); q.Get("start") != "2026-09-25T00:00:00Z" || q.Get("interval") != "24h" || q.Get("limit") != "4" {
		t.Fatalf("date start: %v", q)
	}
	for _, bad := range []string{`"interval":"2h"`, `"start":"yesterday"`, `"start":"2030-01-01"`} {
		if _, err := f.call(t, freeKey, "ohlcv", `{"network":"ethereum","address":"`+ethPool+`",`+bad+`}`); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestSwapsAndThePaidHost(t *testing.T) {
	f := newFixture(t)
	// The public host refuses a pro key's swaps with 403; the paid host serves them.
	out, err := f.call(t, proKey, "swaps", `{"network":"ethereum","address":"`+ethPool+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != 16 || rows[0] != "time\ttoken_0\tamount_0\ttoken_1\tamount_1\tvalue_usd\tsender\ttx" {
		t.Fatalf("%d rows, header %q", len(rows), rows[0])
	}
	if rows[1] != "2026-09-28T13:06:30Z\tUSDC\t-2500.5\tWETH\t0.7234\t2500.00\t0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad\t0xtx000" {
		t.Fatalf("row: %q", rows[1])
	}
	if r := f.pro.last(); r == nil || r.Header.Get("Authorization") != proKey || r.URL.Query().Get("limit") != "15" {
		t.Fatalf("paid host request: %+v", r)
	}
	out, _ = f.call(t, proKey, "swaps", `{"network":"ethereum","address":"`+ethPool+`","limit":99}`)
	if n := len(lines(out)) - 1; n != 30 {
		t.Fatalf("limit 99: %d rows", n)
	}

	// A free key: both hosts refuse; the plan message wins and does not
	// read as a refused key (no HTTPError the pool would turn into "connect again").
	_, err = f.call(t, freeKey, "swaps", `{"network":"ethereum","address":"`+ethPool+`"}`)
	var he *adapters.HTTPError
	if err == nil || errors.As(err, &he) || !strings.Contains(err.Error(), "requires a Dev or Pro plan") || !strings.Contains(err.Error(), "dev plan") {
		t.Fatalf("free key: %v", err)
	}
}

func TestRefusedKeyOnACall(t *testing.T) {
	f := newFixture(t)
	_, err := f.call(t, "Bearer "+freeKey, "pool", `{"network":"ethereum","address":"`+ethPool+`"}`)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || !he.Refused() || he.Status != http.StatusUnauthorized {
		t.Fatalf("refused key: %v", err)
	}
	if f.pro.count() != 0 {
		t.Fatal("a 401 was retried on the paid host")
	}
}

func TestUnknownTool(t *testing.T) {
	f := newFixture(t)
	if _, err := f.call(t, freeKey, "trending", `{}`); err == nil || !strings.Contains(err.Error(), `"trending"`) {
		t.Fatalf("unknown tool: %v", err)
	}
}
