package groupchat

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// Channel is the notification channel migration 016's trigger writes to: a
// guild's id, when a message is posted in its chat.
const Channel = "guilds_group_chat"

// How often a follower re-reads the chat: PollInterval while the listener is
// not listening, SafetyInterval while it is.
const (
	PollInterval   = 250 * time.Millisecond
	SafetyInterval = 5 * time.Second
)

// Listener holds one PostgreSQL connection listening on Channel while
// anyone follows a chat, and wakes the followers of the guild a
// notification names. It starts with its first follower and stops with its
// last, so a process needs no wiring to own one.
type Listener struct {
	cfg *pgx.ConnConfig
	log *slog.Logger

	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	count  int
	gen    int // of the current listening goroutine
	cancel context.CancelFunc
	up     bool
}

// NewListener returns a listener connecting with cfg.
func NewListener(cfg *pgx.ConnConfig, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{cfg: cfg, log: log, subs: map[string]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a token (at most one pending)
// whenever guildID's chat gets a message, and a function to stop.
// Subscribe before reading, so a message posted in between is not missed.
func (l *Listener) Subscribe(guildID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.subs[guildID] == nil {
		l.subs[guildID] = map[chan struct{}]struct{}{}
	}
	l.subs[guildID][ch] = struct{}{}
	l.count++
	if l.count == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		l.gen++
		l.cancel = cancel
		go l.run(ctx, l.gen)
	}
	l.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subs[guildID], ch)
			if len(l.subs[guildID]) == 0 {
				delete(l.subs, guildID)
			}
			l.count--
			if l.count == 0 {
				l.cancel()
				l.up = false
			}
		})
	}
}

// Listening reports whether notifications are flowing.
func (l *Listener) Listening() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

func (l *Listener) run(ctx context.Context, gen int) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx, gen)
		l.setUp(gen, false)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("group chat events: listener lost its connection; followers poll until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *Listener) listen(ctx context.Context, gen int) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	l.setUp(gen, true)
	l.wake("") // messages posted while nobody listened
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload)
	}
}

func (l *Listener) setUp(gen int, up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen == l.gen && l.count > 0 {
		l.up = up
	}
}

// wake signals the followers of a guild, or every follower for "".
func (l *Listener) wake(guildID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, chans := range l.subs {
		if guildID != "" && id != guildID {
			continue
		}
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// Follow sends the guild's messages after seq `after`, in seq order, and
// then each new one as it is posted, until ctx ends or send fails. l may be
// nil (it then polls at PollInterval).
func Follow(ctx context.Context, db store.DB, guildID string, after int64, l *Listener, send func(Message) error) error {
	var wake <-chan struct{}
	if l != nil {
		ch, stop := l.Subscribe(guildID)
		defer stop()
		wake = ch
	}
	for {
		msgs, err := Since(ctx, db, guildID, after, MaxLimit)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if err := send(m); err != nil {
				return err
			}
			after = m.Seq
		}
		if len(msgs) == MaxLimit {
			continue // more are waiting
		}
		interval := PollInterval
		if l != nil && l.Listening() {
			interval = SafetyInterval
		}
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}
