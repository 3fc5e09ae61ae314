package twitterapi_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// The adapter behind the session pool on a real Postgres: the catalog row
// of the manifest, Connect with a bad then a good key, two tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "twitterapi", URL: svc.URL,
		BadKeys: []string{"tapi-not-a-key"}, GoodKey: goodKey,
		Tools: 10, Listed: []string{"twitterapi_search"},
		Calls: []adapterstest.Call{
			{Tool: "user", Args: `{"user":"jack"}`, Want: []string{"\n44196397\tjack\tName jack\t"}},
			{Tool: "trends", Args: `{"limit":3}`, Check: newlines(4)},
			{Tool: "search", Args: `{"query":"ratelimited"}`, WantErr: true, Want: []string{"429"}},
		},
	})
}

func newlines(n int) func(*testing.T, string, error) {
	return func(t *testing.T, out string, _ error) {
		if strings.Count(out, "\n") != n {
			t.Fatalf("%d lines, want %d: %q", strings.Count(out, "\n"), n, out)
		}
	}
}
