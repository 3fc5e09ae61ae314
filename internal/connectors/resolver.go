package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/guilds/guilds/internal/secret"
)

// clockTick is the resolution of the resolver's coarse clock. The hot path
// reads that clock (one atomic load) instead of time.Now, which costs more
// than the rest of the hot path; Timing.Skew dwarfs the error.
const clockTick = 20 * time.Millisecond

// entry is an immutable snapshot of what the resolver serves for one
// connection. Times are unix nanoseconds on the coarse clock.
type entry struct {
	cred    Credential
	inj     Injection
	err     error    // non-nil: the verdict served until hardAt
	secrets []string // cred's values to redact (binding.secrets)
	version int64
	softAt  int64 // from here on, serve and reload in the background
	hardAt  int64 // from here on, callers wait for a reload
}

// slot is the per-connection state; slots are never removed while the
// resolver lives (one small struct per connection ever used).
type slot struct {
	e          atomic.Pointer[entry]
	b          atomic.Pointer[binding]
	kicking    atomic.Bool
	minVersion atomic.Int64 // highest version announced by an invalidation
	mu         sync.Mutex
	wake       chan struct{} // closed when an invalidation arrives
}

func (s *slot) waitCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

func (s *slot) broadcast() {
	s.mu.Lock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.mu.Unlock()
}

// Resolver hands out the credential of a connection at call time. A fresh
// credential comes from memory with no lock and no allocation; a stale one is
// refreshed once across all replicas (docs/adr/0202-refresh-coordination.md).
// Obtain it from Engine.Resolver.
type Resolver struct {
	eng  *Engine
	db   *pgxpool.Pool
	rdb  *redis.Client
	keys *secret.Keyring
	log  *slog.Logger
	t    Timing

	slots   atomic.Pointer[slotTable] // copy-on-write
	slotsMu sync.Mutex
	now     atomic.Int64 // coarse clock, unix ns
	sf      singleflight.Group

	gone           goneHooks
	redisDownUntil atomic.Int64
	bg             context.Context
	stop           context.CancelFunc
	wg             sync.WaitGroup
	disabled       bool
}

func newResolver(e *Engine, disabled bool) *Resolver {
	r := &Resolver{eng: e, db: e.db, rdb: e.rdb, keys: e.keys, log: e.log, t: e.t, disabled: disabled}
	r.slots.Store(newSlotTable(16))
	r.now.Store(time.Now().UnixNano())
	r.bg, r.stop = context.WithCancel(context.Background())
	if disabled {
		return r
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(clockTick)
		defer t.Stop()
		for {
			select {
			case <-r.bg.Done():
				return
			case <-t.C:
				r.tick()
			}
		}
	}()
	if r.rdb != nil {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.subscribe(r.bg)
		}()
	}
	return r
}

func (r *Resolver) tick() time.Time {
	now := time.Now()
	n := now.UnixNano()
	for {
		cur := r.now.Load()
		if n <= cur || r.now.CompareAndSwap(cur, n) {
			return now
		}
	}
}

func (r *Resolver) close() {
	r.stop()
	r.wg.Wait()
}

// Token returns the connection's credential, refreshing it first when it is
// stale. The error is an *ErrReconnectRequired, an *ErrRefreshFailing,
// ErrNoCredential, ErrUnknownConnection or ctx's error.
func (r *Resolver) Token(ctx context.Context, id uuid.UUID) (Credential, error) {
	// Small enough to be inlined into the caller: the fresh case costs one
	// copy of the credential and no call beyond fast.
	if e := r.fast(id); e != nil && e.err == nil {
		noteUsed(ctx, e)
		return e.cred, nil
	}
	return r.tokenSlow(ctx, id)
}

func (r *Resolver) tokenSlow(ctx context.Context, id uuid.UUID) (Credential, error) {
	if e := r.fast(id); e != nil {
		return Credential{}, e.err
	}
	e, err := r.slowPath(ctx, id)
	if err != nil {
		return Credential{}, err
	}
	noteUsed(ctx, e)
	return e.cred, nil
}

// Injection returns the credential shaped for its transport (headers, env,
// _meta), with the same freshness guarantees as Token. The maps are shared
// and must not be modified.
func (r *Resolver) Injection(ctx context.Context, id uuid.UUID) (Injection, error) {
	if e := r.fast(id); e != nil && e.err == nil {
		noteUsed(ctx, e)
		return e.inj, nil
	}
	return r.injectionSlow(ctx, id)
}

func (r *Resolver) injectionSlow(ctx context.Context, id uuid.UUID) (Injection, error) {
	if e := r.fast(id); e != nil {
		return Injection{}, e.err
	}
	e, err := r.slowPath(ctx, id)
	if err != nil {
		return Injection{}, err
	}
	noteUsed(ctx, e)
	return e.inj, nil
}

// fast is the hot path: one atomic load of the slot table, a probe on the
// 16-byte id, one atomic load of the entry and one of the clock.
func (r *Resolver) fast(id uuid.UUID) *entry {
	if s := r.slots.Load().get(id); s != nil {
		if e := s.e.Load(); e != nil {
			now := r.now.Load()
			if now < e.hardAt {
				if now >= e.softAt {
					r.kick(s, id)
				}
				return e
			}
		}
	}
	return nil
}

func (r *Resolver) slotFor(id uuid.UUID) *slot {
	if s := r.slots.Load().get(id); s != nil {
		return s
	}
	r.slotsMu.Lock()
	defer r.slotsMu.Unlock()
	old := r.slots.Load()
	if s := old.get(id); s != nil {
		return s
	}
	s := &slot{}
	r.slots.Store(old.with(id, s))
	return s
}

type loadMode int

const (
	loadNormal loadMode = iota // refresh only when stale
	loadAhead                  // also refresh when inside the refresh-ahead window
	loadForce                  // refresh now (operator request)
)

func (r *Resolver) flight(ctx context.Context, s *slot, id uuid.UUID, mode loadMode) <-chan singleflight.Result {
	return r.sf.DoChan(id.String(), func() (any, error) {
		// The work is shared by every waiter, so one caller's cancellation
		// must not abort it; it has its own bound instead.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.t.WaitTimeout+r.t.RefreshTimeout)
		defer cancel()
		return r.load(ctx, s, id, mode)
	})
}

func (r *Resolver) slowPath(ctx context.Context, id uuid.UUID) (*entry, error) {
	if r.disabled {
		return nil, ErrNotInUse
	}
	s := r.slotFor(id)
	select {
	case res := <-r.flight(ctx, s, id, loadNormal):
		if res.Err != nil {
			return nil, res.Err
		}
		e := res.Val.(*entry)
		if e.err != nil {
			return nil, e.err
		}
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// kick reloads a connection in the background: refresh ahead of expiry, or
// the periodic recheck against the store.
func (r *Resolver) kick(s *slot, id uuid.UUID) {
	if !s.kicking.CompareAndSwap(false, true) {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer s.kicking.Store(false)
		cur := s.e.Load()
		res := <-r.flight(r.bg, s, id, loadAhead)
		if res.Err != nil || s.e.Load() == cur {
			// Keep serving, but do not start a reload on every call.
			if cur != nil {
				cp := *cur
				cp.softAt = r.now.Load() + int64(time.Second)
				s.e.CompareAndSwap(cur, &cp)
			}
		}
	}()
}

// Refresh refreshes a connection's token now, whatever its expiry (still once
// across replicas), and returns the new credential.
func (r *Resolver) Refresh(ctx context.Context, id uuid.UUID) (Credential, error) {
	if r.disabled {
		return Credential{}, ErrNotInUse
	}
	s := r.slotFor(id)
	res := <-r.flight(ctx, s, id, loadForce)
	if res.Err != nil {
		return Credential{}, res.Err
	}
	e := res.Val.(*entry)
	if e.err == nil {
		noteUsed(ctx, e)
	}
	return e.cred, e.err
}

// Forget drops what the resolver holds for a connection and tells the other
// replicas to do the same.
func (r *Resolver) invalidate(id uuid.UUID, version int64) {
	if version >= goneVersion {
		r.tellGone(id) // Forget: the login was deleted here or on another replica
	}
	s := r.slots.Load().get(id)
	if s == nil {
		return
	}
	for {
		old := s.minVersion.Load()
		if version <= old || s.minVersion.CompareAndSwap(old, version) {
			break
		}
	}
	for {
		e := s.e.Load()
		if e == nil || e.version >= version {
			break
		}
		cp := *e
		cp.softAt, cp.hardAt = 0, 0
		if s.e.CompareAndSwap(e, &cp) {
			break
		}
	}
	s.broadcast()
}

// install publishes e unless the slot already holds a newer version.
func (r *Resolver) install(s *slot, e *entry) *entry {
	for {
		cur := s.e.Load()
		if cur != nil && cur.version > e.version {
			return cur
		}
		if s.e.CompareAndSwap(cur, e) {
			return e
		}
	}
}

// refreshAt is when a token issued at issued and expiring at expiry is due
// for a refresh ahead of its expiry: RefreshAhead before it, but never before
// half its lifetime, so short-lived tokens are not refreshed back to back.
// issued must be the issue time, not the time of the check, or the due time
// would keep moving away as the expiry approaches.
func (r *Resolver) refreshAt(expiry, issued time.Time) int64 {
	if r.t.RefreshAhead < 0 {
		return math.MaxInt64
	}
	ahead := expiry.Add(-r.t.RefreshAhead).UnixNano()
	half := issued.UnixNano() + (expiry.UnixNano()-issued.UnixNano())/2
	return max(ahead, half)
}

// issuedAt estimates when the stored token was issued: the last successful
// connect or refresh, or now when that is unknown (a token just refreshed by
// this process, or read from the Redis cache).
func issuedAt(h Health, now time.Time) time.Time {
	if h.LastSuccessAt.IsZero() || h.LastSuccessAt.After(now) {
		return now
	}
	return h.LastSuccessAt
}

// skew is how close to its expiry a token stops being served: Timing.Skew,
// but at most a quarter of the token's lifetime, so that a token issued for
// 20 s is not stale from birth (and refreshed on every lookup). An unknown
// issue time gets the full skew.
func (r *Resolver) skew(expiry, issued time.Time) time.Duration {
	if issued.IsZero() {
		return r.t.Skew
	}
	if life := expiry.Sub(issued); life > 0 && life/4 < r.t.Skew {
		return life / 4
	}
	return r.t.Skew
}

// knownIssued is the stored token's issue time when the record says it (the
// last successful connect or refresh), else zero.
func knownIssued(h Health, now time.Time) time.Time {
	if h.LastSuccessAt.After(now) {
		return time.Time{}
	}
	return h.LastSuccessAt
}

func (r *Resolver) credEntry(b *binding, cred Credential, version int64, h Health, now time.Time) *entry {
	e := &entry{cred: cred, inj: b.inject(cred), secrets: b.secrets(cred), version: version}
	n := now.UnixNano()
	e.softAt, e.hardAt = n+int64(r.t.Recheck), math.MaxInt64
	if !cred.Expiry.IsZero() {
		e.hardAt = cred.Expiry.Add(-r.skew(cred.Expiry, knownIssued(h, now))).UnixNano()
		if b.oauth != nil && cred.RefreshToken != "" {
			e.softAt = min(e.softAt, r.refreshAt(cred.Expiry, issuedAt(h, now)))
		}
		if h.State == HealthRefreshFailing && !h.NextRetryAt.IsZero() {
			e.softAt = max(e.softAt, h.NextRetryAt.UnixNano())
		}
		e.softAt = min(e.softAt, e.hardAt)
	}
	return e
}

func (r *Resolver) errEntry(err error, version int64, now time.Time, until time.Time) *entry {
	n := now.UnixNano()
	end := n + int64(r.t.ErrorTTL)
	if !until.IsZero() && until.UnixNano() > n {
		end = min(end, until.UnixNano())
	}
	return &entry{err: err, version: version, softAt: end, hardAt: end}
}

// fromCache serves a credential another replica already put in Redis.
func (r *Resolver) fromCache(ctx context.Context, s *slot, id uuid.UUID) *entry {
	b := s.b.Load()
	if b == nil || r.rdb == nil {
		return nil
	}
	c, ok := r.cacheGet(ctx, id)
	if !ok || len(c.ct) == 0 || c.version < s.minVersion.Load() {
		return nil
	}
	if cur := s.e.Load(); cur != nil && cur.version > c.version {
		return nil
	}
	now := r.tick()
	if !c.expiry.IsZero() && !now.Before(c.expiry.Add(-r.t.Skew)) {
		return nil
	}
	cred, err := unseal(r.keys, id, c.ct)
	if err != nil || b.issuerMoved(cred) {
		return nil // e.g. sealed under a key dropped after rotation: read Postgres
	}
	return r.install(s, r.credEntry(b, cred, c.version, Health{State: HealthHealthy}, now))
}

// load brings the slot up to date, refreshing the token when mode asks for it.
func (r *Resolver) load(ctx context.Context, s *slot, id uuid.UUID, mode loadMode) (*entry, error) {
	if mode == loadNormal {
		if e := r.fromCache(ctx, s, id); e != nil {
			return e, nil
		}
	}
	rec, err := readRecord(ctx, r.db, id)
	if errors.Is(err, ErrUnknownConnection) {
		return r.goneEntry(s, id), nil
	}
	if err != nil {
		return nil, r.storeError(id, err)
	}
	b := r.eng.bindingFor(rec)
	s.b.Store(b)
	e, cred, need := r.evaluate(rec, b, mode)
	if !need {
		e = r.install(s, e)
		if e.err == nil && rec.conn.Health.State == HealthHealthy {
			r.cachePut(ctx, id, rec.version, cred.Expiry, rec.ct)
		}
		return e, nil
	}
	return r.refresh(ctx, s, id, rec, b, mode)
}

func (r *Resolver) storeError(id uuid.UUID, err error) error {
	if errors.Is(err, ErrUnknownConnection) {
		return fmt.Errorf("%w %s", ErrUnknownConnection, id)
	}
	r.log.Error("connectors: credential store unavailable", "connection", id, "err", err)
	return &ErrRefreshFailing{ConnectionID: id, Code: "store_unavailable"}
}

// evaluate decides what a stored record means now: an entry to serve, or
// (need=true) a refresh of cred.
func (r *Resolver) evaluate(rec *record, b *binding, mode loadMode) (e *entry, cred Credential, need bool) {
	now := r.tick()
	c := rec.conn
	h := c.Health
	switch {
	case h.State == HealthReconnectRequired, h.State == HealthDisconnected && (rec.has || c.Status == StatusDisconnected):
		code := h.LastErrorCode
		if code == "" {
			code = CodeDisconnected
		}
		return r.errEntry(&ErrReconnectRequired{ConnectionID: c.ID, Server: c.ServerSlug, Code: code}, rec.version, now, time.Time{}), cred, false
	case !rec.has:
		return r.errEntry(fmt.Errorf("connection %s (%s) has no stored login yet (status %s): %w", label(c.ServerSlug), c.ID, c.Status, ErrNoCredential), 0, now, time.Time{}), cred, false
	}
	cred, err := unseal(r.keys, c.ID, rec.ct)
	if err != nil {
		r.log.Error("connectors: stored credential cannot be decrypted", "connection", c.ID, "key_id", rec.keyID, "err", err)
		return r.errEntry(fmt.Errorf("connection %s (%s): its stored login cannot be decrypted with GUILDS_ENCRYPTION_KEY (key id %s)", label(c.ServerSlug), c.ID, rec.keyID), rec.version, now, time.Time{}), cred, false
	}
	if b.issuerMoved(cred) {
		// Never served to the resource, never refreshed at the new server:
		// the refresh path records the verdict, for the operator to see.
		if b.oauth != nil {
			return nil, cred, true
		}
		return r.errEntry(&ErrReconnectRequired{ConnectionID: c.ID, Server: c.ServerSlug, Code: CodeIssuerChanged}, rec.version, now, time.Time{}), cred, false
	}
	canRefresh := b.oauth != nil && cred.RefreshToken != ""
	if cred.Expiry.IsZero() {
		if mode == loadForce && canRefresh {
			return nil, cred, true
		}
		return r.credEntry(b, cred, rec.version, h, now), cred, false
	}
	stale := !now.Before(cred.Expiry.Add(-r.skew(cred.Expiry, knownIssued(h, now))))
	want := stale || mode == loadForce || (mode == loadAhead && now.UnixNano() >= r.refreshAt(cred.Expiry, issuedAt(h, now)))
	if !want {
		return r.credEntry(b, cred, rec.version, h, now), cred, false
	}
	if !canRefresh {
		if !stale {
			return r.credEntry(b, cred, rec.version, h, now), cred, false
		}
		if c.Auth == AuthOAuth && b.oauth == nil {
			return r.errEntry(fmt.Errorf("connection %s (%s): provider %q is not loaded on this instance, so its token cannot be refreshed", label(c.ServerSlug), c.ID, c.Ref.Provider), rec.version, now, time.Time{}), cred, false
		}
		return r.errEntry(&ErrReconnectRequired{ConnectionID: c.ID, Server: c.ServerSlug, Code: "expired"}, rec.version, now, time.Time{}), cred, false
	}
	if h.State == HealthRefreshFailing && now.Before(h.NextRetryAt) && mode != loadForce {
		if !stale {
			return r.credEntry(b, cred, rec.version, h, now), cred, false
		}
		return r.errEntry(&ErrRefreshFailing{ConnectionID: c.ID, Server: c.ServerSlug, Code: h.LastErrorCode,
			Attempts: h.Attempts, NextRetryAt: h.NextRetryAt}, rec.version, now, h.NextRetryAt), cred, false
	}
	return nil, cred, true
}

// refresh takes the cross-replica lock, re-reads the store and refreshes.
// Every wait is bounded by Timing.WaitTimeout.
func (r *Resolver) refresh(ctx context.Context, s *slot, id uuid.UUID, rec *record, b *binding, mode loadMode) (*entry, error) {
	wctx, cancel := context.WithTimeout(ctx, r.t.WaitTimeout)
	defer cancel()
	slug := rec.conn.ServerSlug
	seen := rec.version
	poll := 10 * time.Millisecond
	var lk *heldLock
	for {
		var err error
		lk, err = r.lock(wctx, id)
		if err == nil {
			break
		}
		if !errors.Is(err, errLockBusy) {
			if wctx.Err() != nil {
				return nil, r.waitTimeout(id, slug)
			}
			return nil, r.storeError(id, err)
		}
		wake := s.waitCh()
		timer := time.NewTimer(poll)
		select {
		case <-wake:
		case <-timer.C:
		case <-wctx.Done():
			timer.Stop()
			return nil, r.waitTimeout(id, slug)
		}
		timer.Stop()
		poll = min(poll*2, 200*time.Millisecond)
		// Someone else holds the lock: adopt their result when it lands.
		rec2, err := readRecord(wctx, r.db, id)
		if err == nil && rec2.version != seen {
			seen = rec2.version
			e, _, need := r.evaluate(rec2, b, loadNormal)
			if !need {
				return r.install(s, e), nil
			}
		}
	}
	defer r.unlock(lk, id)

	// Re-read under the lock: the previous holder may have refreshed between
	// our read and our lock, and its refresh token is the only valid one now.
	cur, err := readRecord(ctx, r.db, id)
	if err != nil {
		return nil, r.storeError(id, err)
	}
	if cur.version != rec.version {
		e, _, need := r.evaluate(cur, b, loadNormal)
		if !need {
			return r.install(s, e), nil
		}
	}
	e, cred, need := r.evaluate(cur, b, mode)
	if !need {
		return r.install(s, e), nil
	}

	if b.issuerMoved(cred) {
		return r.refreshFailed(ctx, s, id, cur, b, cred, ErrorClass{Permanent: true, Code: CodeIssuerChanged})
	}
	rctx, rcancel := context.WithTimeout(ctx, r.t.RefreshTimeout)
	fresh, err := b.oauth.Refresh(rctx, cur.conn.Ref.SubService, cred)
	timedOut := rctx.Err() != nil
	rcancel()
	if err != nil {
		class := b.oauth.ClassifyError(err)
		if timedOut {
			class = ErrorClass{Code: "timeout"}
		}
		return r.refreshFailed(ctx, s, id, cur, b, cred, class)
	}
	if fresh.RefreshToken == "" {
		fresh.RefreshToken = cred.RefreshToken
	}
	// Persist the rotated refresh token before anything else may use it.
	keyID, ct, err := seal(r.keys, id, fresh)
	if err != nil {
		return nil, err
	}
	var version int64
	for attempt := 0; ; attempt++ {
		version, err = saveRefreshed(ctx, r.db, id, cur.version, keyID, ct, fresh.Expiry)
		if err == nil || errors.Is(err, errFenced) || attempt == 2 || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if errors.Is(err, errFenced) {
		// Only possible if our lease and lock were lost; never overwrite.
		r.log.Error("connectors: refreshed credential lost a race; adopting the stored one", "connection", id, "server", slug)
		return r.adopt(ctx, s, id, b)
	}
	if err != nil {
		// The provider may have rotated the refresh token; keep the lease so
		// no other replica refreshes with the old one until it expires.
		lk.keepLease = true
		r.log.Error("connectors: refreshed credential could not be stored", "connection", id, "server", slug, "err", err)
		now := r.tick()
		return r.install(s, r.credEntry(b, fresh, cur.version, Health{State: HealthHealthy, LastSuccessAt: now}, now)), nil
	}
	now := r.tick()
	e = r.install(s, r.credEntry(b, fresh, version, Health{State: HealthHealthy, LastSuccessAt: now}, now))
	r.cachePut(ctx, id, version, fresh.Expiry, ct)
	r.publish(ctx, id, version)
	r.log.Info("connectors: token refreshed", "connection", id, "server", slug, "version", version)
	return e, nil
}

func (r *Resolver) waitTimeout(id uuid.UUID, slug string) error {
	r.log.Warn("connectors: gave up waiting for a token refresh", "connection", id, "server", slug)
	return &ErrRefreshFailing{ConnectionID: id, Server: slug, Code: "lock_timeout"}
}

func (r *Resolver) adopt(ctx context.Context, s *slot, id uuid.UUID, b *binding) (*entry, error) {
	rec, err := readRecord(ctx, r.db, id)
	if err != nil {
		return nil, r.storeError(id, err)
	}
	e, _, need := r.evaluate(rec, b, loadNormal)
	if need {
		return nil, &ErrRefreshFailing{ConnectionID: id, Server: rec.conn.ServerSlug, Code: "concurrent_update"}
	}
	return r.install(s, e), nil
}

func (r *Resolver) refreshFailed(ctx context.Context, s *slot, id uuid.UUID, cur *record, b *binding, cred Credential, class ErrorClass) (*entry, error) {
	slug := cur.conn.ServerSlug
	if class.Code == "" {
		class.Code = "refresh_error"
	}
	h, version, err := recordFailure(ctx, r.db, id, cur.version, class.Permanent, class.Code)
	if errors.Is(err, errFenced) {
		// Someone else wrote meanwhile (e.g. refreshed): theirs stands.
		return r.adopt(ctx, s, id, b)
	}
	if err != nil {
		return nil, r.storeError(id, err)
	}
	r.log.Warn("connectors: token refresh failed", "connection", id, "server", slug,
		"code", class.Code, "reconnect_required", class.Permanent, "attempts", h.Attempts)
	r.cachePut(ctx, id, version, time.Time{}, nil)
	r.publish(ctx, id, version)
	now := r.tick()
	if class.Permanent {
		return r.install(s, r.errEntry(&ErrReconnectRequired{ConnectionID: id, Server: slug, Code: class.Code}, version, now, time.Time{})), nil
	}
	if now.Before(cred.Expiry.Add(-r.skew(cred.Expiry, knownIssued(cur.conn.Health, now)))) {
		// Refreshing ahead of expiry: the current token still works.
		return r.install(s, r.credEntry(b, cred, version, h, now)), nil
	}
	return r.install(s, r.errEntry(&ErrRefreshFailing{ConnectionID: id, Server: slug, Code: class.Code,
		Attempts: h.Attempts, NextRetryAt: h.NextRetryAt}, version, now, h.NextRetryAt)), nil
}
