package connectors

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
)

// goneVersion outranks every stored version: what Forget announces and what
// a deleted login's verdict carries, so no cached copy can come back.
const goneVersion = math.MaxInt64 / 2

// goneHooks are told of logins that no longer exist.
type goneHooks struct {
	mu  sync.Mutex
	fns []func(uuid.UUID)
}

// OnGone registers fn to be told, on its own goroutine, of every login this
// process learns was deleted: by Forget here or on another replica (the
// invalidation channel), or by a lookup that found no row. The session pool
// closes the login's sessions with it.
func (r *Resolver) OnGone(fn func(uuid.UUID)) {
	r.gone.mu.Lock()
	r.gone.fns = append(r.gone.fns, fn)
	r.gone.mu.Unlock()
}

func (r *Resolver) tellGone(id uuid.UUID) {
	r.gone.mu.Lock()
	fns := append([]func(uuid.UUID){}, r.gone.fns...)
	r.gone.mu.Unlock()
	for _, fn := range fns {
		go fn(id)
	}
}

// Gone records that a login no longer exists (its row was found missing):
// what the resolver held for it is dropped and every later lookup is
// refused with ErrUnknownConnection. "Gone" is a verdict, not a transient
// failure to keep serving through.
func (r *Resolver) Gone(id uuid.UUID) {
	r.goneEntry(r.slotFor(id), id)
}

func (r *Resolver) goneEntry(s *slot, id uuid.UUID) *entry {
	for {
		old := s.minVersion.Load()
		if old >= goneVersion || s.minVersion.CompareAndSwap(old, goneVersion) {
			break
		}
	}
	prev := s.e.Load()
	e := r.install(s, r.errEntry(fmt.Errorf("%w %s: the login was deleted", ErrUnknownConnection, id), goneVersion, r.tick(), time.Time{}))
	if prev == nil || prev.err == nil {
		r.tellGone(id)
	}
	s.broadcast()
	return e
}
