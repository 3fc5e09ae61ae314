package agentsecrets

import (
	"strconv"

	"github.com/guilds/guilds/internal/sealed"
)

// SealedTables are the agents' secrets and the sealed arguments of
// secret_store calls, as `guilds keys rotate` re-seals them (main registers
// them on the platform's sealed.Registry).
var SealedTables = []sealed.Set{
	sealed.Table{
		Table: "agent_secrets", PK: []string{"id::text"}, Match: "id = $1::uuid",
		Cols: []string{"ciphertext"},
		AAD:  func(pk []string, _ string) ([]byte, error) { return AAD(pk[0]), nil },
	},
	sealed.Table{
		Table: "secret_call_arguments", PK: []string{"run_id::text", "seq::text"},
		Match: "run_id = $1::uuid AND seq = $2::integer",
		Cols:  []string{"ciphertext"},
		AAD: func(pk []string, _ string) ([]byte, error) {
			seq, err := strconv.Atoi(pk[1])
			return CallAAD(pk[0], seq), err
		},
	},
}
