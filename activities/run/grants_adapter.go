// GrantsOfferer plugs internal/grants into the run activities: main sets
// Deps.Offerer to GrantsOfferer{S: grantsService}.

package run

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// GrantsOfferer adapts grants.Service to Offerer.
type GrantsOfferer struct {
	S *grants.Service
	// Lists, when set, re-lists the remote MCP servers of the agent's connected
	// logins whose stored tool list is older than ListMaxAge, before the offer is
	// resolved. A failed listing keeps the stored list (the pool logs it).
	Lists ListRefresher
}

// ListRefresher refreshes a login's stored tool list when it is too old (internal/mcppool).
type ListRefresher interface {
	Refresh(ctx context.Context, connectionID string, maxAge time.Duration) error
}

// ListMaxAge is how old a stored tool list may be at run start before it is listed again.
const ListMaxAge = 10 * time.Minute

// Offered implements Offerer.
func (g GrantsOfferer) Offered(ctx context.Context, db store.DB, agentID, trigger string) (Offer, error) {
	if g.Lists != nil {
		ids, err := grants.ChainRemoteLogins(ctx, db, agentID)
		if err != nil {
			return Offer{}, err
		}
		// Concurrently, so slow servers cost one listing timeout, not one each.
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = g.Lists.Refresh(ctx, id, ListMaxAge) // the stored list stands in when listing fails
			}()
		}
		wg.Wait()
	}
	return g.Current(ctx, db, agentID, trigger)
}

// Current resolves the offer as it stands, without refreshing tool lists.
func (g GrantsOfferer) Current(ctx context.Context, db store.DB, agentID, trigger string) (Offer, error) {
	off, err := g.S.Offered(ctx, db, agentID, grants.Trigger(trigger))
	if err != nil {
		var disc *grants.ErrConnectionDisconnected
		if errors.As(err, &disc) {
			return Offer{}, &StartRefusedError{Reason: err.Error()}
		}
		return Offer{}, err
	}
	out := Offer{Warnings: off.Warnings, Memory: off.Memory}
	for _, t := range off.Tools {
		out.Tools = append(out.Tools, OfferedTool{Name: t.Name, Kind: t.Kind, Description: t.Description,
			Schema: t.Schema, ShapedSchema: t.ShapedSchema, ConnectionID: t.ConnectionID,
			ServerSlug: t.ServerSlug, RemoteName: t.RemoteName, Class: t.Class})
	}
	return out, nil
}
