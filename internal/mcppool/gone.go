package mcppool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// goneSource is the resolver's side of a deleted login: a verdict to record
// and a way to hear of deletes done elsewhere (connectors.Resolver).
type goneSource interface {
	Gone(id uuid.UUID)
	OnGone(fn func(uuid.UUID))
}

// listenGone closes the sessions of every login the resolver learns was
// deleted, on this replica or another.
func (p *Pool) listenGone() {
	if g, ok := p.o.Credentials.(goneSource); ok {
		g.OnGone(func(id uuid.UUID) { p.Drop(id.String()) })
	}
}

// present checks, at call time, that the login still exists and is not
// disconnected, against its row as the pool last read it: kept only while
// the pool hears every change to it (logins.go), else read now, so that a
// replica that missed a change does not serve a deleted login from its
// session and cache. A login found gone has its session closed and the
// resolver's copy dropped.
func (p *Pool) present(ctx context.Context, connectionID string) error {
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return store.ErrNotFound
	}
	info, err := p.row(ctx, connectionID)
	if errors.Is(err, store.ErrNotFound) {
		return p.gone(id)
	}
	if err != nil {
		return err
	}
	if info.Status == connstore.StatusDisconnected {
		p.forget(connectionID, nil)
		return &connectors.ErrReconnectRequired{ConnectionID: id, Server: info.Slug, Code: connectors.CodeDisconnected}
	}
	return nil
}

// gone closes a deleted login's session, has the resolver drop its copy, and
// is the error its callers get.
func (p *Pool) gone(id uuid.UUID) error {
	p.Drop(id.String())
	if g, ok := p.o.Credentials.(goneSource); ok {
		g.Gone(id)
	}
	return fmt.Errorf("the login %s was deleted: %w", id, connectors.ErrUnknownConnection)
}

// SweepEvery is how often a pool closes the sessions of logins that are gone
// or disconnected without a call noticing: logins removed by a cascade (a
// deleted server, organisation, guild or agent), or deleted on a replica
// whose invalidation this one missed.
const SweepEvery = time.Minute

// sweepLoop runs Sweep every interval until the pool closes.
func (p *Pool) sweepLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), p.o.ListTimeout)
			if err := p.Sweep(ctx); err != nil {
				p.log.Warn("mcppool: session sweep failed", "err", oneLine(err))
			}
			cancel()
		}
	}
}

// Sweep closes every open session, and drops every kept row, of a login that
// no longer exists or is disconnected, in one query: the bound on a change
// made without announcing it (connstore.Channel).
func (p *Pool) Sweep(ctx context.Context) error {
	ids := p.logins.ids()
	p.mu.Lock()
	for id := range p.sessions {
		if _, kept := p.logins.get(id); !kept {
			ids = append(ids, id)
		}
	}
	p.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	live, err := connstore.Live(ctx, p.o.DB, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !live[id] {
			p.log.Info("mcppool: closing the session of a login that is gone or disconnected", "connection", id)
			p.Drop(id)
		}
	}
	return nil
}
