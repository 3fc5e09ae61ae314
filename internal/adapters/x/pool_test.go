package x_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// The adapter behind the session pool on a real Postgres: the catalog row
// of the manifest, Connect with a bad then a good token, tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "x", URL: svc.api(),
		BadKeys: []string{"AAAAnot%3Da-token"}, GoodKey: goodKey,
		Tools: 4, Listed: []string{"x_search"},
		Calls: []adapterstest.Call{
			{Tool: "user", Args: `{"user":"XDevelopers"}`, Want: []string{"\n2244994945\tXDevelopers\tName XDevelopers\t583423\t"}},
			{Tool: "search", Args: `{"query":"from:XDevelopers","limit":3}`, Check: func(t *testing.T, out string, _ error) {
				if strings.Count(out, "\n") != 4 {
					t.Fatalf("search: %q", out)
				}
			}},
			{Tool: "search", Args: `{"query":"ratelimited"}`, WantErr: true, Want: []string{"429"}},
		},
	})
}
