package mcppool

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// The login's row (its status and its catalog row) is read once and kept in
// memory while the pool hears connstore.Channel, on which every change to a
// login is announced in the transaction that makes it; a call then costs no
// query. A notification drops the login's copy, so its next call reads the
// row again: a deleted or disconnected login is refused, a reconnected one
// served with what it holds now. While the listening connection is down the
// copies are dropped and not used, and every call reads the row as it did
// before the cache (docs/adr/0627).

// loginCache holds the rows read while the pool listens. gen moves with every
// drop, so that a row read before a change was heard is not kept after it.
type loginCache struct {
	mu  sync.RWMutex
	up  bool // listening now: copies may be kept and served
	gen uint64
	m   map[string]ServerInfo
	// outputs are the listed output schemas read per login and remote tool
	// name (nil: the tool lists none); a listing stored is announced too.
	outputs map[string]map[string][]byte
	// heard is told of each login id heard on the channel, and listens
	// counts the LISTENs that succeeded (tests wait on both).
	heard   atomic.Pointer[func(id string)]
	listens atomic.Int64
}

// get is the kept row of a login, while the pool listens.
func (c *loginCache) get(id string) (ServerInfo, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.up {
		return ServerInfo{}, false
	}
	info, ok := c.m[id]
	return info, ok
}

// generation is taken before a row is read; put keeps the row only if no
// drop came in between.
func (c *loginCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *loginCache) put(id string, info ServerInfo, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.up && c.gen == gen {
		c.m[id] = info
	}
}

// output is a tool's kept output schema, while the pool listens.
func (c *loginCache) output(id, remoteName string) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.up {
		return nil, false
	}
	raw, ok := c.outputs[id][remoteName]
	return raw, ok
}

func (c *loginCache) putOutput(id, remoteName string, raw []byte, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up || c.gen != gen {
		return
	}
	if c.outputs[id] == nil {
		c.outputs[id] = map[string][]byte{}
	}
	c.outputs[id][remoteName] = raw
}

func (c *loginCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, id)
	delete(c.outputs, id)
}

// reset drops every copy: on listening (what was read before may have
// missed a change) and on losing the connection (notifications are lost
// until it is back).
func (c *loginCache) reset(up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = map[string]ServerInfo{}
	c.outputs = map[string]map[string][]byte{}
	c.up = up
}

func (c *loginCache) ids() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.m))
	for id := range c.m {
		out = append(out, id)
	}
	return out
}

// row is the login's row as the pool needs it: the kept copy, or read now
// (and kept while the pool listens). A row read anew that no longer matches
// the open session's (its catalog row was changed) retires the session.
func (p *Pool) row(ctx context.Context, connectionID string) (ServerInfo, error) {
	if info, ok := p.logins.get(connectionID); ok {
		return info, nil
	}
	gen := p.logins.generation()
	info, err := p.load(ctx, connectionID)
	if err != nil {
		return info, err
	}
	p.logins.put(connectionID, info, gen)
	p.mu.Lock()
	s := p.sessions[connectionID]
	p.mu.Unlock()
	if s != nil && !sameServer(s.info, info) {
		p.log.Info("mcppool: the login's catalog row changed; opening a new session", "connection", connectionID)
		p.forget(connectionID, s)
	}
	return info, nil
}

// sameServer reports whether two reads of a login describe the same server
// reached the same way (the status aside: present decides on it).
func sameServer(a, b ServerInfo) bool {
	a.Status, b.Status = "", ""
	return reflect.DeepEqual(a, b)
}

// listenLogins starts the goroutine that keeps the pool listening on
// connstore.Channel until Close.
func (p *Pool) listenLogins() {
	if p.o.DB == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stopListening = cancel
	p.listening.Add(1)
	go func() {
		defer p.listening.Done()
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := p.listen(ctx)
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("mcppool: lost the login notifications; reading each login's row per call until they are back", "err", oneLine(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		}
	}()
}

// listen holds one connection listening on connstore.Channel; each login id
// heard drops that login's copy.
func (p *Pool) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, p.o.DB.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+connstore.Channel); err != nil {
		return store.Map(err)
	}
	p.logins.reset(true)
	defer p.logins.reset(false)
	p.logins.listens.Add(1)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil
			}
			return err
		}
		p.logins.drop(n.Payload)
		if fn := p.logins.heard.Load(); fn != nil {
			(*fn)(n.Payload)
		}
	}
}
