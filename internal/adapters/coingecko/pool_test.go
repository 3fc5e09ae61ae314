package coingecko_test

import (
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// Through the session pool on a real database: Connect asks /ping with the
// key (a wrong one stores nothing), writes the manifest's tools, and calls
// reach the adapter with the stored key.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "coingecko", URL: f.URL,
		BadKeys: []string{"CG-wrong-secret-999"}, GoodKey: goodKey,
		Tools: 8, Listed: []string{"coingecko_search", "coingecko_prices", "coingecko_chart"},
		Calls: []adapterstest.Call{
			{Tool: "prices", Args: `{"ids":["bitcoin"]}`, Prefix: "id\tprice_usd\t", Want: []string{"\nbitcoin\t67187\t"}},
			{Tool: "chart", Args: `{"id":"bitcoin","days":2}`, Lines: 49},
			{Tool: "coin", Args: `{"id":"no-such-coin"}`, WantErr: true, Want: []string{"404"}},
		},
	})
}
