// GrantsOfferer plugs internal/grants into the run activities: main sets
// Deps.Offerer to GrantsOfferer{S: grantsService}.

package run

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// GrantsOfferer adapts grants.Service to Offerer.
type GrantsOfferer struct{ S *grants.Service }

// Offered implements Offerer.
func (g GrantsOfferer) Offered(ctx context.Context, db store.DB, agentID, trigger string) (Offer, error) {
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
