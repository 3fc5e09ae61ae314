package connectors_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
)

// TestDeletedLoginIsAVerdict: a replica that never hears of a delete (no
// Redis) stops serving the cached credential at its next recheck, because a
// missing row is a verdict, not a store failure to serve through; the
// session pool is told so that it closes the login's sessions.
func TestDeletedLoginIsAVerdict(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	ctx := context.Background()
	eng := e.engine(t, engineOpts{redisURL: "-", timing: connectors.Timing{Recheck: 50 * time.Millisecond}})
	told := make(chan uuid.UUID, 1)
	eng.Resolver().OnGone(func(id uuid.UUID) { told <- id })
	e.connect(t, eng, id)
	if _, err := eng.Resolver().Token(ctx, id); err != nil {
		t.Fatal(err)
	}
	connectionstest.Delete(t, e.pool, id.String())
	waitFor(t, "the deleted login to be refused", func() bool {
		_, err := eng.Resolver().Token(ctx, id)
		return errors.Is(err, connectors.ErrUnknownConnection)
	})
	select {
	case got := <-told:
		if got != id {
			t.Fatalf("told of %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pool was not told of the deleted login")
	}
}
