package connectors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Redis holds three things, all optional for correctness:
//   - guilds:cred:<id>: "<version>|<expiry unix ns>|<ciphertext>", the sealed
//     credential (an empty ciphertext is a tombstone: read Postgres). Written
//     only when newer than what is there.
//   - guilds:credlock:<id>: the refresh lease, a random owner token with a PX
//     expiry, deleted only by its owner.
//   - channel guilds:cred:invalidate: "<id> <version>" after every write.
const (
	cacheKeyPrefix    = "guilds:cred:"
	lockKeyPrefix     = "guilds:credlock:"
	invalidateChannel = "guilds:cred:invalidate"
	redisOpTimeout    = 500 * time.Millisecond
	redisDownFor      = 2 * time.Second
	tombstoneTTL      = time.Hour
	noExpiryCacheTTL  = time.Hour
)

// NewRedisClient opens a Redis client with the timeouts the engine expects:
// short dials and no internal retry storm, so that a Redis outage degrades to
// the Postgres fallback quickly.
func NewRedisClient(redisURL string) (*redis.Client, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, errors.New("REDIS_URL is not a valid redis:// URL")
	}
	opt.DialTimeout = 500 * time.Millisecond
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	return redis.NewClient(opt), nil
}

var setIfNewer = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local v = tonumber(string.match(cur, '^(%d+)|'))
  if v and v >= tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)

var releaseLock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (r *Resolver) redisUsable() bool {
	return r.rdb != nil && time.Now().UnixNano() >= r.redisDownUntil.Load()
}

// redisFailed notes an outage so that the next calls skip Redis for a while.
func (r *Resolver) redisFailed(op string, err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	if r.redisDownUntil.Swap(time.Now().Add(redisDownFor).UnixNano()) < time.Now().UnixNano() {
		r.log.Warn("connectors: redis unavailable, using the postgres fallback", "op", op, "err", err)
	}
}

func redisCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, redisOpTimeout)
}

type cached struct {
	version int64
	expiry  time.Time
	ct      []byte // empty: tombstone
}

func (r *Resolver) cacheGet(ctx context.Context, id uuid.UUID) (cached, bool) {
	if !r.redisUsable() {
		return cached{}, false
	}
	ctx, cancel := redisCtx(ctx)
	defer cancel()
	b, err := r.rdb.Get(ctx, cacheKeyPrefix+id.String()).Bytes()
	if err != nil {
		r.redisFailed("cache get", err)
		return cached{}, false
	}
	vs, rest, ok1 := strings.Cut(string(b[:min(len(b), 48)]), "|")
	es, _, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 {
		return cached{}, false
	}
	v, err1 := strconv.ParseInt(vs, 10, 64)
	e, err2 := strconv.ParseInt(es, 10, 64)
	if err1 != nil || err2 != nil {
		return cached{}, false
	}
	c := cached{version: v, ct: b[len(vs)+len(es)+2:]}
	if e != 0 {
		c.expiry = time.Unix(0, e)
	}
	return c, true
}

// cachePut stores a sealed credential (or a tombstone when ct is empty) unless
// Redis already holds a newer version.
func (r *Resolver) cachePut(ctx context.Context, id uuid.UUID, version int64, expiry time.Time, ct []byte) {
	if !r.redisUsable() {
		return
	}
	ttl := tombstoneTTL
	var exp int64
	if len(ct) > 0 {
		ttl = noExpiryCacheTTL
		if !expiry.IsZero() {
			exp = expiry.UnixNano()
			ttl = time.Until(expiry)
			if ttl <= 0 {
				return
			}
		}
	}
	val := make([]byte, 0, 48+len(ct))
	val = strconv.AppendInt(val, version, 10)
	val = append(val, '|')
	val = strconv.AppendInt(val, exp, 10)
	val = append(val, '|')
	val = append(val, ct...)
	ctx, cancel := redisCtx(ctx)
	defer cancel()
	err := setIfNewer.Run(ctx, r.rdb, []string{cacheKeyPrefix + id.String()}, version, val, ttl.Milliseconds()).Err()
	r.redisFailed("cache put", err)
}

func (r *Resolver) publish(ctx context.Context, id uuid.UUID, version int64) {
	if !r.redisUsable() {
		return
	}
	ctx, cancel := redisCtx(ctx)
	defer cancel()
	err := r.rdb.Publish(ctx, invalidateChannel, id.String()+" "+strconv.FormatInt(version, 10)).Err()
	r.redisFailed("publish", err)
}

// subscribe applies invalidations from other replicas until ctx ends. go-redis
// reconnects the subscription by itself after an outage; messages lost
// meanwhile are caught by the periodic recheck.
func (r *Resolver) subscribe(ctx context.Context) {
	ps := r.rdb.Subscribe(ctx, invalidateChannel)
	defer func() { _ = ps.Close() }() // unsubscribing on the way out; nothing to do if it fails
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			ids, vs, _ := strings.Cut(msg.Payload, " ")
			id, err := uuid.Parse(ids)
			if err != nil {
				continue
			}
			v, _ := strconv.ParseInt(vs, 10, 64)
			r.invalidate(id, v)
		}
	}
}

func newOwnerToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
