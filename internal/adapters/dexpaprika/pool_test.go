package dexpaprika_test

import (
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// The registered adapter behind the session pool: Connect asks /usage,
// stores the manifest's tools, and calls reach the service with the stored key.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	svc := newService(t, false)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "dexpaprika", URL: svc.URL,
		BadKeys: []string{"dp_not_a_key"}, GoodKey: freeKey,
		Tools: 7, Listed: []string{"dexpaprika_search"}, Hint: "plan free",
		Calls: []adapterstest.Call{
			{Tool: "pools", Args: `{"network":"ethereum","limit":2}`, Lines: 3, Prefix: "pool\tdex\t",
				Check: func(t *testing.T, _ string, _ error) {
					if got := svc.last().Header.Get("Authorization"); got != freeKey {
						t.Fatalf("the stored key was not sent as the whole header: %q", got)
					}
				}},
			{Tool: "prices", Args: `{"network":"ethereum","addresses":["` + weth + `"]}`,
				Check: func(t *testing.T, out string, _ error) {
					if out != "address\tprice_usd\tlast_updated\n"+weth+"\t3456.78\t2026-09-28T13:06:30Z\n" {
						t.Fatalf("prices: %q", out)
					}
				}},
		},
	})
}
