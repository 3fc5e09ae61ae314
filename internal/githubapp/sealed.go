package githubapp

import "github.com/guilds/guilds/internal/sealed"

// SealedTokens are the installation tokens kept, sealed, for the runs'
// redaction sets, as `guilds keys rotate` re-seals them (main registers it
// on the platform's sealed.Registry).
var SealedTokens = sealed.Table{
	Table: "github_issued_tokens", PK: []string{"id::text", "agent_id::text"}, Match: "id = $1::bigint AND agent_id = $2::uuid",
	Cols: []string{"ciphertext"},
	AAD:  func(pk []string, _ string) ([]byte, error) { return TokenAAD(pk[1]), nil },
}
