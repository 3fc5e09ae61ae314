package models

import "github.com/guilds/guilds/internal/sealed"

// SealedKeys are the organisations' model keys as `guilds keys rotate`
// re-seals them (main registers it on the platform's sealed.Registry).
var SealedKeys = sealed.Table{
	Table: "organisation_model_keys", PK: []string{"organisation_id::text", "provider"},
	Match: "organisation_id = $1::uuid AND provider = $2",
	Cols:  []string{"ciphertext"},
	AAD:   func(pk []string, _ string) ([]byte, error) { return aad(pk[0], pk[1]), nil },
}
