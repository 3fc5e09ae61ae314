package pinnedprices_test

import (
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// The manifest's row behind the session pool on a real Postgres: Connect
// refuses a wrong key and a Demo key, and stores a Pro key; the login lists
// no model tools.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	f := newFakeGecko(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "pinned_prices", URL: f.URL,
		BadKeys: []string{"CG-wrong-secret-999", demoKey}, GoodKey: goodKey,
		Tools: 0,
	})
}
