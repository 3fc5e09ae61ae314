package alchemy_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
)

// The registered adapter behind the session pool on a real Postgres. The
// catalog row points at a plain test server, so every chain (Solana's
// JSON-RPC too) is served there.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	svc := newService(t, false)
	path := func(want string) func(*testing.T, string, error) {
		return func(t *testing.T, _ string, _ error) {
			if got := svc.last().Path; got != want {
				t.Fatalf("request path %q, want %q", got, want)
			}
		}
	}
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "alchemy", URL: svc.URL,
		BadKeys: []string{"alcht_notAKey0009"}, GoodKey: goodKey,
		Tools: 3, Listed: []string{"alchemy_holdings"},
		Connected: func(t *testing.T) { path("/"+goodKey+"/getNFTsForOwner")(t, "", nil) },
		Calls: []adapterstest.Call{
			{Tool: "holdings", Args: `{"owner":"` + ownerAddr + `","limit":2}`, Lines: 6, Prefix: "contract\ttoken_id\t",
				Check: func(t *testing.T, out string, _ error) {
					if !strings.HasSuffix(out, "next_page_key\tpk2\n") {
						t.Fatalf("holdings: %q", out)
					}
				}},
			{Tool: "holdings", Args: `{"owner":"` + solOwner + `","chain":"solana","limit":2}`, Lines: 5, Check: path("/v2/" + goodKey)},
			{Tool: "collection", Args: `{"contract":"` + baycAddr + `"}`, Want: []string{"\tBored Ape Yacht Club\tboredapeyachtclub\t"}},
			{Tool: "holdings", Args: `{"owner":"0x0000000000000000000000000000000000000002"}`, WantErr: true, Want: []string{"400"}},
		},
	})
}
