package pinnedprices_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/validation"
)

// The connect step is the adapter's own: coins sent for another server are
// refused on their field, another server's connect is left as it is, and a
// Pinned prices key connect without a key is refused before CoinGecko is
// asked anything.
func TestConnectStepIsOnlyForPinnedPrices(t *testing.T) {
	ctx := context.Background()
	c := pinnedprices.Connect{}
	other := grants.ServerRoute{Slug: "coingecko", Kind: catalog.KindAdapter, Adapter: "coingecko", Auth: catalog.AuthToken}
	var v *validation.Error
	if _, err := c.Step(ctx, other, "k", []pinnedprices.Coin{{ID: "bitcoin"}}); !errors.As(err, &v) || v.Problems[0].Field != "coins" {
		t.Fatalf("coins for another server: %v", err)
	}
	if step, err := c.Step(ctx, other, "k", nil); step != nil || err != nil {
		t.Fatalf("another server: %v %v", step, err)
	}
	pinned := grants.ServerRoute{Slug: "pinned_prices", Kind: catalog.KindAdapter, Adapter: pinnedprices.Name, Auth: catalog.AuthToken}
	if _, err := c.Step(ctx, pinned, "  ", nil); !errors.As(err, &v) || v.Problems[0].Field != "key" {
		t.Fatalf("no key: %v", err)
	}
}
