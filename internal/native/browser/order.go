package browser

import (
	"context"
	"sync"
	"time"
)

// gather is how long a browser call waits for the other calls of its turn
// to arrive before the first of them runs. The run workflow starts a turn's
// calls together, but one browser serves them all: "navigate, then eval"
// must not run the other way round.
const gather = 150 * time.Millisecond

// sequencer runs one agent's browser calls one at a time, the calls of a
// run in the order of their seq (the order the model listed them).
type sequencer struct {
	mu     sync.Mutex
	agents map[string]*lane
}

type lane struct {
	running bool
	waiting []*waiter
	wake    chan struct{} // closed and replaced whenever the lane changes
}

type waiter struct {
	run   string
	seq   int
	ready time.Time // it may run from then on
}

func (s *sequencer) lane(agentID string) *lane {
	if s.agents == nil {
		s.agents = map[string]*lane{}
	}
	l := s.agents[agentID]
	if l == nil {
		l = &lane{wake: make(chan struct{})}
		s.agents[agentID] = l
	}
	return l
}

// first reports whether w goes before every other waiter of its run.
func (l *lane) first(w *waiter) bool {
	for _, o := range l.waiting {
		if o != w && o.run == w.run && o.seq < w.seq {
			return false
		}
	}
	return true
}

func (l *lane) changed() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// acquire waits for the call's turn; the returned function ends it.
func (s *sequencer) acquire(ctx context.Context, agentID, runID string, seq int) (func(), error) {
	w := &waiter{run: runID, seq: seq, ready: time.Now().Add(gather)}
	s.mu.Lock()
	l := s.lane(agentID)
	l.waiting = append(l.waiting, w)
	l.changed()
	for {
		now := time.Now()
		if !l.running && l.first(w) && !now.Before(w.ready) {
			break
		}
		wake := l.wake
		s.mu.Unlock()
		var timer <-chan time.Time
		if now.Before(w.ready) {
			timer = time.After(w.ready.Sub(now))
		}
		select {
		case <-wake:
		case <-timer:
		case <-ctx.Done():
			s.mu.Lock()
			l.remove(w)
			l.changed()
			s.mu.Unlock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	l.remove(w)
	l.running = true
	l.changed()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		l.running = false
		l.changed()
		s.mu.Unlock()
	}, nil
}

func (l *lane) remove(w *waiter) {
	for i, o := range l.waiting {
		if o == w {
			l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
			return
		}
	}
}
