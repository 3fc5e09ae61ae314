package notes

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// Reach is what an agent may do with guild and organisation notes. Its own
// agent notes are always readable and writable.
type Reach struct {
	ReadGuild, ReadOrg, WriteGuild, WriteOrg bool
}

// DefaultReach is the reach when no binding says otherwise: the guild's
// notes read and write, the organisation's read only.
var DefaultReach = Reach{ReadGuild: true, WriteGuild: true, ReadOrg: true}

// ReachFunc resolves an agent's note reach. The grants package provides the
// real one (the four artifact grant bindings); the lead wires it in Deps.
type ReachFunc func(ctx context.Context, db store.DB, agentID string) (Reach, error)

// DefaultReachFunc returns DefaultReach for every agent.
func DefaultReachFunc(context.Context, store.DB, string) (Reach, error) { return DefaultReach, nil }
