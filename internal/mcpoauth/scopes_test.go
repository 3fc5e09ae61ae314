package mcpoauth

import (
	"slices"
	"testing"
)

func TestChallengedScopesKeepWhatWasGranted(t *testing.T) {
	for _, tc := range []struct {
		name               string
		prev               []string
		prevIssuer, issuer string
		challenge          string
		want               []string
	}{
		{"first login", nil, "", "https://as", "mcp:basic", []string{"mcp:basic"}},
		{"step-up", []string{"mcp:basic"}, "https://as", "https://as", "mcp:write", []string{"mcp:basic", "mcp:write"}},
		{"asked again", []string{"mcp:basic", "mcp:write"}, "https://as", "https://as", "mcp:write", []string{"mcp:basic", "mcp:write"}},
		{"another server", []string{"mcp:basic"}, "https://old", "https://new", "mcp:write", []string{"mcp:write"}},
	} {
		if got := ChallengedScopes(tc.prev, tc.prevIssuer, tc.issuer, tc.challenge); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
