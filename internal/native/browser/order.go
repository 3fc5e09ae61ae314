package browser

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// The run workflow starts a turn's calls together, but one browser serves
// them all: "navigate, then eval" must not run the other way round. So an
// agent's browser calls run one at a time, and a call waits for the
// browser calls its turn lists before it.
const (
	// gather is how long a call whose turn is unknown (no database) waits
	// for its siblings to arrive before the first of them runs.
	gather = 150 * time.Millisecond
	// absent is how long a call waits for an earlier sibling that has not
	// arrived at all: the budget may have refused it, so it never will.
	absent = 2 * time.Second
)

// turnOrder is what a call knows of its turn: the seqs of the browser calls
// listed before it. known is false without a database to read the turn.
type turnOrder struct {
	earlier []int
	known   bool
}

// earlierSiblings reads the call's turn (the assistant message just before
// its seq) and returns the seqs of the browser calls listed before it.
func earlierSiblings(ctx context.Context, db store.DB, call tools.Call) turnOrder {
	if db == nil || call.RunID == "" || call.Seq <= 1 {
		return turnOrder{}
	}
	var seq int
	var raw []byte
	err := db.QueryRow(ctx, `SELECT seq, tool_calls FROM messages
		WHERE run_id = $1 AND seq < $2 AND role = 'assistant' ORDER BY seq DESC LIMIT 1`, call.RunID, call.Seq).Scan(&seq, &raw)
	if err != nil {
		return turnOrder{}
	}
	var calls []runs.ToolCallRequest
	if json.Unmarshal(raw, &calls) != nil {
		return turnOrder{}
	}
	i := call.Seq - seq - 1
	if i < 0 || i >= len(calls) || (call.CallID != "" && calls[i].ID != call.CallID) {
		return turnOrder{}
	}
	o := turnOrder{known: true}
	for j := range i {
		if strings.HasPrefix(calls[j].Name, "browser_") {
			o.earlier = append(o.earlier, seq+1+j)
		}
	}
	return o
}

// sequencer holds each agent's browser calls in a lane.
type sequencer struct {
	mu     sync.Mutex
	agents map[string]*lane
}

type lane struct {
	running *waiter
	waiting []*waiter
	done    map[string][]int // run → seqs finished here, most recent last
	wake    chan struct{}    // closed and replaced whenever the lane changes
}

type waiter struct {
	run     string
	seq     int
	order   turnOrder
	arrived time.Time
}

// maxDone bounds the finished seqs remembered per run.
const maxDone = 64

func (s *sequencer) lane(agentID string) *lane {
	if s.agents == nil {
		s.agents = map[string]*lane{}
	}
	l := s.agents[agentID]
	if l == nil {
		l = &lane{wake: make(chan struct{}), done: map[string][]int{}}
		s.agents[agentID] = l
	}
	return l
}

func (l *lane) changed() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// present reports whether the run's call at seq is waiting or running.
func (l *lane) present(run string, seq int) bool {
	if l.running != nil && l.running.run == run && l.running.seq == seq {
		return true
	}
	return slices.ContainsFunc(l.waiting, func(o *waiter) bool { return o.run == run && o.seq == seq })
}

// mayRun reports whether w may start now, and otherwise when to look again
// (zero = when the lane changes).
func (l *lane) mayRun(w *waiter, now time.Time) (bool, time.Duration) {
	if l.running != nil {
		return false, 0
	}
	if !w.order.known {
		if wait := w.arrived.Add(gather).Sub(now); wait > 0 {
			return false, wait
		}
		for _, o := range l.waiting {
			if o != w && o.run == w.run && o.seq < w.seq {
				return false, 0
			}
		}
		return true, 0
	}
	var recheck time.Duration
	for _, seq := range w.order.earlier {
		switch {
		case slices.Contains(l.done[w.run], seq):
		case l.present(w.run, seq):
			return false, 0
		default:
			wait := w.arrived.Add(absent).Sub(now)
			if wait > 0 {
				recheck = max(recheck, wait)
			}
		}
	}
	return recheck == 0, recheck
}

// acquire waits for the call's turn; the returned function ends it.
func (s *sequencer) acquire(ctx context.Context, agentID, runID string, seq int, order turnOrder) (func(), error) {
	w := &waiter{run: runID, seq: seq, order: order, arrived: time.Now()}
	s.mu.Lock()
	l := s.lane(agentID)
	l.waiting = append(l.waiting, w)
	l.changed()
	for {
		ok, again := l.mayRun(w, time.Now())
		if ok {
			break
		}
		wake := l.wake
		s.mu.Unlock()
		var timer <-chan time.Time
		if again > 0 {
			timer = time.After(again)
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
	l.running = w
	l.changed()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		l.running = nil
		d := append(l.done[w.run], w.seq)
		if len(d) > maxDone {
			d = d[len(d)-maxDone:]
		}
		l.done[w.run] = d
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
