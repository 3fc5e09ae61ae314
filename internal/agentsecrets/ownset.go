package agentsecrets

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// ErrOperatorSecret refuses an agent's write (secret_store, or an answer to
// its secret_request) over a name an operator set along its chain.
var ErrOperatorSecret = errors.New("an operator set this secret")

// OperatorSecretError names the secret an agent's write would have replaced
// or shadowed.
type OperatorSecretError struct {
	Name  string
	Owner Scope
}

func (e *OperatorSecretError) Error() string {
	return fmt.Sprintf("%s is a secret an operator set at the %s scope: an agent's secret never replaces it; "+
		"use another name, or ask an operator to change %s on the Secrets page", e.Name, e.Owner, e.Name)
}

func (e *OperatorSecretError) Is(target error) bool { return target == ErrOperatorSecret }

// agentActorPrefix starts the actor of every write an agent made itself.
const agentActorPrefix = "agent:"

// SetOwn stores a value as the agent's own secret for secret_store and an
// answer to secret_request. An operator-set secret of the same name, owned by
// the agent or by its guild or organisation, is never replaced or shadowed:
// the write is refused with an OperatorSecretError. The agent's own earlier
// value (secret_store, an answer) is replaced.
func SetOwn(ctx context.Context, db store.DB, kr *secret.Keyring, agent Place, name, value, actor string) (Secret, bool, error) {
	if err := checkNotOperatorSet(ctx, db, agent, name, " FOR UPDATE"); err != nil {
		return Secret{}, false, err
	}
	return Set(ctx, db, kr, agent, name, value, actor)
}

// CheckNotOperatorSet answers an OperatorSecretError when an operator set a
// secret of that name for the agent, its guild or its organisation: asking
// for it (secret_request) could only end in a refused answer.
func CheckNotOperatorSet(ctx context.Context, db store.DB, agent Place, name string) error {
	return checkNotOperatorSet(ctx, db, agent, name, "")
}

func checkNotOperatorSet(ctx context.Context, db store.DB, agent Place, name, lock string) error {
	var owner Scope
	err := db.QueryRow(ctx, `SELECT owner_scope FROM agent_secrets WHERE name = $1 AND set_by NOT LIKE $5
		AND ((owner_scope = 'organisation' AND owner_id = $2::uuid) OR (owner_scope = 'guild' AND owner_id = $3::uuid)
		  OR (owner_scope = 'agent' AND owner_id = $4::uuid))
		ORDER BY CASE owner_scope WHEN 'agent' THEN 0 WHEN 'guild' THEN 1 ELSE 2 END LIMIT 1`+lock,
		name, agent.OrgID, agent.GuildID, agent.AgentID, agentActorPrefix+"%").Scan(&owner)
	switch err = store.Map(err); {
	case err == nil:
		return &OperatorSecretError{Name: name, Owner: owner}
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return nil
}
