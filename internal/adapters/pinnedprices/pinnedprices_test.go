package pinnedprices_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(f *fakeGecko, key string) adapters.Conn {
	return adapters.Conn{BaseURL: f.URL, Cred: connectors.Credential{AccessToken: key}}
}

func TestRegisteredWithoutTools(t *testing.T) {
	a, err := adapters.Get("pinned_prices")
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeGecko(t)
	_, err = a.Call(context.Background(), conn(f, goodKey), "prices", nil)
	if err == nil || err.Error() != "pinned prices offers no tools" {
		t.Fatalf("call: %v", err)
	}
}

func TestCheck(t *testing.T) {
	f := newFakeGecko(t)
	a := pinnedprices.Adapter{}
	ctx := context.Background()
	if hint, err := a.Check(ctx, conn(f, goodKey)); err != nil || hint != "" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	for _, key := range []string{"CG-wrong", demoKey, ""} {
		_, err := a.Check(ctx, conn(f, key))
		if !errors.Is(err, adapters.ErrRejected) {
			t.Errorf("key %q: %v, want rejected", key, err)
		}
		if key != "" && err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("the error carries the key: %v", err)
		}
	}
	f.Close()
	if _, err := a.Check(ctx, conn(f, goodKey)); err == nil || errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("unreachable service: %v, want an error that is not a refusal", err)
	}
}

func TestSearch(t *testing.T) {
	f := newFakeGecko(t)
	ctx := context.Background()
	coins, err := pinnedprices.Search(ctx, conn(f, goodKey), " bitcoin ")
	if err != nil {
		t.Fatal(err)
	}
	want := []pinnedprices.Coin{{ID: "bitcoin", Symbol: "BTC", Name: "Bitcoin"}, {ID: "wrapped-bitcoin", Symbol: "WBTC", Name: "Wrapped Bitcoin"}}
	if len(coins) != 2 || coins[0] != want[0] || coins[1] != want[1] {
		t.Fatalf("coins %+v", coins)
	}
	if q := f.lastQuery("/search"); q != "query=bitcoin" {
		t.Errorf("query %q", q)
	}
	if coins, err := pinnedprices.Search(ctx, conn(f, goodKey), "many"); err != nil || len(coins) != 20 {
		t.Fatalf("many: %d %v", len(coins), err)
	}
	if coins, err := pinnedprices.Search(ctx, conn(f, goodKey), "zzz"); err != nil || coins == nil || len(coins) != 0 {
		t.Fatalf("nothing found: %v %v", coins, err)
	}
	if _, err := pinnedprices.Search(ctx, conn(f, goodKey), "  "); err == nil {
		t.Fatal("an empty query was sent")
	}
	if _, err := pinnedprices.Search(ctx, conn(f, "CG-wrong"), "bitcoin"); !errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("refused key: %v", err)
	}
}

func TestQuote(t *testing.T) {
	f := newFakeGecko(t)
	ctx := context.Background()
	got, err := pinnedprices.Quote(ctx, conn(f, goodKey), []string{"Ethereum", "bitcoin", "nope", "delisted-coin", "bitcoin", "bad id!"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["bitcoin"].USD != 67187.3361 || *got["bitcoin"].Change24h != 3.6361 || got["ethereum"].USD != 3521.4 {
		t.Fatalf("quotes %+v", got)
	}
	if q := f.lastQuery("/simple/price"); q != "ids=bitcoin%2Cdelisted-coin%2Cethereum%2Cnope&include_24hr_change=true&vs_currencies=usd" {
		t.Errorf("query %q", q)
	}
	if _, err := pinnedprices.Quote(ctx, conn(f, demoKey), []string{"bitcoin"}); !errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("demo key: %v", err)
	}
}

func TestValidateCoins(t *testing.T) {
	ok, err := pinnedprices.ValidateCoins("coins", []pinnedprices.Coin{{ID: " Bitcoin ", Symbol: " btc ", Name: "Bitcoin"}})
	if err != nil || ok[0] != (pinnedprices.Coin{ID: "bitcoin", Symbol: "btc", Name: "Bitcoin"}) {
		t.Fatalf("%+v %v", ok, err)
	}
	many := make([]pinnedprices.Coin, 21)
	for i := range many {
		many[i].ID = "c" + strings.Repeat("x", i+1)
	}
	for name, in := range map[string][]pinnedprices.Coin{
		"none":      nil,
		"too many":  many,
		"duplicate": {{ID: "bitcoin"}, {ID: "BITCOIN"}},
		"bad id":    {{ID: "bit coin"}},
	} {
		if _, err := pinnedprices.ValidateCoins("coins", in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSection(t *testing.T) {
	f := newFakeGecko(t)
	coins := []pinnedprices.Coin{{ID: "bitcoin", Symbol: "btc", Name: "Bitcoin"}, {ID: "pepe", Symbol: "pepe", Name: "Pepe"},
		{ID: "tesla-xstock", Symbol: "tslax", Name: "Tesla xStock"}, {ID: "delisted-coin", Symbol: "dead", Name: "Dead"}}
	ids := make([]string, len(coins))
	for i, c := range coins {
		ids[i] = c.ID
	}
	prices, err := pinnedprices.Quote(context.Background(), conn(f, goodKey), ids)
	if err != nil {
		t.Fatal(err)
	}
	want := "State prices (USD, at run start):\n" +
		"BTC Bitcoin: 67187.34 (+3.6% 24h)\n" +
		"PEPE Pepe: 0.00001234 (+12.1% 24h)\n" +
		"TSLAX Tesla xStock: 251.90\n" +
		"DEAD Dead: not quoted"
	if got := pinnedprices.Section(coins, prices); got != want {
		t.Fatalf("section:\n%s\nwant:\n%s", got, want)
	}
}
