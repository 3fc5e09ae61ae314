package mcpoauth

import (
	"slices"
	"strings"
)

// ChallengedScopes is what a new authorization asks for when a server's
// challenge names scope: the scopes the last one asked for at the same
// authorization server, then the challenge's new ones (SEP-2350). A step-up
// that asked for the challenged scope alone would lose what the login could
// already do.
func ChallengedScopes(previous []string, previousIssuer, issuer, challenge string) []string {
	var out []string
	if previousIssuer == issuer {
		out = append(out, previous...)
	}
	for _, s := range strings.Fields(challenge) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
