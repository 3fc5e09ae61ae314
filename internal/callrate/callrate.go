// Package callrate is the rate of tool calls each organisation's runs may
// make (issue 33, item 7): the setting, kept in Postgres (table
// organisation_call_rates, the one owner), and the limiter that enforces it
// across every worker replica, a token bucket in Redis. See
// docs/adr/0517-organisation-call-rate.md.
package callrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// MaxPerMinute bounds the setting: beyond it a limit protects nothing.
const MaxPerMinute = 1_000_000

// Settings are an organisation's settings of this package.
type Settings struct {
	// ToolCallsPerMinute is the rate of tool calls of the organisation's
	// runs, all together; 0 is no limit.
	ToolCallsPerMinute int `json:"tool_calls_per_minute"`
}

// SettingsInput changes the settings; a nil field is left as it is.
type SettingsInput struct {
	ToolCallsPerMinute *int `json:"tool_calls_per_minute"`
}

// Get reads the organisation's rate; none set is 0, no limit.
func Get(ctx context.Context, db store.DB, orgID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT calls_per_minute FROM organisation_call_rates WHERE organisation_id = $1`, orgID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, store.Map(err)
}

// Set changes the organisation's settings and returns them as stored. The
// caller has checked that the organisation exists and may be changed.
func Set(ctx context.Context, db store.DB, orgID string, in SettingsInput) (Settings, error) {
	var probs validation.Problems
	if in.ToolCallsPerMinute != nil {
		n := *in.ToolCallsPerMinute
		probs.Check(n >= 0 && n <= MaxPerMinute, "tool_calls_per_minute",
			"must be a whole number from 0 (no limit) to %d, got %d", MaxPerMinute, n)
	}
	if err := probs.Err(); err != nil {
		return Settings{}, err
	}
	if in.ToolCallsPerMinute != nil {
		if _, err := db.Exec(ctx, `INSERT INTO organisation_call_rates (organisation_id, calls_per_minute) VALUES ($1, $2)
			ON CONFLICT (organisation_id) DO UPDATE SET calls_per_minute = $2, updated_at = now()`,
			orgID, *in.ToolCallsPerMinute); err != nil {
			return Settings{}, store.Map(err)
		}
	}
	n, err := Get(ctx, db, orgID)
	return Settings{ToolCallsPerMinute: n}, err
}

// Decision is the limiter's answer for one call.
type Decision struct {
	Allowed bool
	// PerMinute is the limit that refused it.
	PerMinute int
	// RetryAfter is how long until the organisation may call again.
	RetryAfter time.Duration
}

// Refusal is the result the model reads for a refused call.
func (d Decision) Refusal() string {
	secs := int(math.Ceil(d.RetryAfter.Seconds()))
	return fmt.Sprintf("rate limit of %d calls a minute for this organisation reached; retry after %d s", d.PerMinute, max(secs, 1))
}

// Limiter takes calls from each organisation's bucket, shared by every
// process on the same Redis. A Redis that does not answer lets calls through
// (the limit is about fairness, not security) and is skipped for a moment.
type Limiter struct {
	rdb       *redis.Client
	now       func() time.Time
	downUntil atomic.Int64
	// SettingTTL is how long a worker keeps an organisation's setting before
	// reading it again (default SettingTTL; negative: read at every call).
	SettingTTL time.Duration
	settings   sync.Map // organisation id → setting
}

type setting struct {
	perMinute int
	until     time.Time
}

// SettingTTL is how long a change of the setting may take to reach every
// worker: a read per call would cost every quick call a round trip.
const SettingTTL = 5 * time.Second

const (
	keyPrefix = "guilds:callrate:"
	opTimeout = 500 * time.Millisecond
	downFor   = 2 * time.Second
)

// NewLimiter builds a limiter. now is the clock of the buckets: nil uses
// Redis's own (one clock for every replica); tests pass theirs.
func NewLimiter(rdb *redis.Client, now func() time.Time) *Limiter {
	return &Limiter{rdb: rdb, now: now}
}

// Rate is the organisation's rate as this worker knows it: read from db at
// most once per SettingTTL.
func (l *Limiter) Rate(ctx context.Context, db store.DB, orgID string) (int, error) {
	ttl := l.SettingTTL
	if ttl == 0 {
		ttl = SettingTTL
	}
	now := time.Now()
	if v, ok := l.settings.Load(orgID); ok && ttl > 0 && now.Before(v.(setting).until) {
		return v.(setting).perMinute, nil
	}
	n, err := Get(ctx, db, orgID)
	if err != nil {
		return 0, err
	}
	if ttl > 0 {
		l.settings.Store(orgID, setting{perMinute: n, until: now.Add(ttl)})
	}
	return n, nil
}

// take is a generic cell rate algorithm: the bucket holds the time (µs)
// at which it is empty again; perMinute calls may come at once, then one
// each interval. It answers 0 when the call is taken, or the µs to wait.
var take = redis.NewScript(`
local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[3])
end
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat + interval - burst * interval - now
if wait > 0 then return math.ceil(wait) end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
return 0`)

// Take takes one call of the organisation's rate of perMinute (0: no limit,
// and no round trip). On a Redis failure the call is allowed and the error
// returned for the caller to log.
func (l *Limiter) Take(ctx context.Context, orgID string, perMinute int) (Decision, error) {
	if l == nil || perMinute <= 0 || time.Now().UnixNano() < l.downUntil.Load() {
		return Decision{Allowed: true}, nil
	}
	interval := float64(time.Minute/time.Microsecond) / float64(perMinute)
	now := ""
	if l.now != nil {
		now = strconv.FormatInt(l.now().UnixMicro(), 10)
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	wait, err := take.Run(ctx, l.rdb, []string{keyPrefix + orgID}, strconv.FormatFloat(interval, 'f', 3, 64), perMinute, now).Int64()
	if err != nil {
		l.downUntil.Store(time.Now().Add(downFor).UnixNano())
		return Decision{Allowed: true}, fmt.Errorf("the call rate could not be checked, so the call goes through: %w", err)
	}
	if wait > 0 {
		return Decision{PerMinute: perMinute, RetryAfter: time.Duration(wait) * time.Microsecond}, nil
	}
	return Decision{Allowed: true}, nil
}
