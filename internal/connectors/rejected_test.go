package connectors_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/connectors"
)

// TestMarkRejectedReachesOtherReplicas: a login one replica marks rejected is
// stored reconnect_required and served so by another replica, whose
// periodic recheck is an hour out, at its next lookups.
func TestMarkRejectedReachesOtherReplicas(t *testing.T) {
	e, id, eng1, eng2 := twoReplicas(t)
	ctx := context.Background()
	if _, err := eng2.Resolver().Token(ctx, id); err != nil {
		t.Fatal(err)
	}

	if err := eng1.Resolver().MarkRejected(ctx, id, "token_rejected"); err != nil {
		t.Fatal(err)
	}
	var rr *connectors.ErrReconnectRequired
	if _, err := eng1.Resolver().Token(ctx, id); !errors.As(err, &rr) || rr.Code != "token_rejected" {
		t.Fatalf("the marking replica: %v", err)
	}
	waitFor(t, "the other replica to see the login rejected", func() bool {
		_, err := eng2.Resolver().Token(ctx, id)
		return errors.As(err, &rr) && rr.Code == "token_rejected"
	})
	c, err := eng2.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != connectors.StatusDisconnected || c.Health.State != connectors.HealthReconnectRequired {
		t.Fatalf("stored: status=%s state=%s", c.Status, c.Health.State)
	}
	if got, err := audit.List(ctx, e.pool, audit.Filter{ConnectionID: id.String()}); err != nil || len(got) != 1 ||
		got[0].Action != audit.ActionDisconnect || got[0].Outcome != "rejected" || got[0].Actor != audit.ActorPlatform {
		t.Fatalf("the rejection's event: %+v %v", got, err)
	}
}

func TestMarkRejectedUnknownConnection(t *testing.T) {
	e := newEnv(t)
	eng := e.engine(t, engineOpts{})
	if err := eng.MarkRejected(context.Background(), uuid.New(), "token_rejected"); !errors.Is(err, connectors.ErrUnknownConnection) {
		t.Fatalf("unknown connection: %v", err)
	}
}
