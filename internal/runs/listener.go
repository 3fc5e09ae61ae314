package runs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// EventsChannel is the notification channel migration 008's triggers write
// to: a run's id, when a message is added or its status changes.
const EventsChannel = "guilds_run_events"

// Listener holds one PostgreSQL connection listening on EventsChannel and
// wakes the followers of the run each notification names. One per API
// process serves every event stream of that process.
type Listener struct {
	cfg *pgx.ConnConfig
	log *slog.Logger

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	up   bool // listening now; followers poll slowly only while it is
}

// NewListener returns a listener that connects with cfg once Run is called.
func NewListener(cfg *pgx.ConnConfig, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{cfg: cfg, log: log, subs: map[string]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a token (coalesced: at most one
// pending) whenever runID changes, and a function to stop. Subscribe before
// reading the run, so a change made in between is not missed.
func (l *Listener) Subscribe(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.subs[runID] == nil {
		l.subs[runID] = map[chan struct{}]struct{}{}
	}
	l.subs[runID][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[runID], ch)
		if len(l.subs[runID]) == 0 {
			delete(l.subs, runID)
		}
		l.mu.Unlock()
	}
}

// Listening reports whether notifications are flowing; while they are not
// (not started, or reconnecting), followers must poll at their fast rate.
func (l *Listener) Listening() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

// Run listens until ctx ends, reconnecting with a capped backoff. Each
// (re)connection wakes every follower, since notifications sent while the
// connection was down are lost.
func (l *Listener) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx)
		l.setUp(false)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("run events: listener lost its connection; followers poll until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+EventsChannel); err != nil {
		return err
	}
	l.setUp(true)
	l.wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload)
	}
}

func (l *Listener) setUp(up bool) {
	l.mu.Lock()
	l.up = up
	l.mu.Unlock()
}

func (l *Listener) wake(runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs[runID] {
		signal(ch)
	}
}

func (l *Listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, chans := range l.subs {
		for ch := range chans {
			signal(ch)
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default: // a wake is already pending
	}
}
