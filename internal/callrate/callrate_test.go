package callrate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/validation"
)

const testRedisURL = "redis://127.0.0.1:6379/5"

func newRedis(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(testRedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func take(t *testing.T, l *callrate.Limiter, org string, n int) callrate.Decision {
	t.Helper()
	d, err := l.Take(context.Background(), org, n)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Three a minute: three calls at once, the fourth waits 20 s; another
// organisation is not affected; 20 s later one more call goes.
func TestLimiterThreeAMinute(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Now()}
	l := callrate.NewLimiter(newRedis(t), c.now)
	org, other := uuid.NewString(), uuid.NewString()
	for i := 0; i < 3; i++ {
		if d := take(t, l, org, 3); !d.Allowed {
			t.Fatalf("call %d refused: %+v", i+1, d)
		}
	}
	d := take(t, l, org, 3)
	if d.Allowed || d.RetryAfter != 20*time.Second || d.PerMinute != 3 {
		t.Fatalf("fourth call: %+v", d)
	}
	if got, want := d.Refusal(), "rate limit of 3 calls a minute for this organisation reached; retry after 20 s"; got != want {
		t.Fatalf("refusal %q, want %q", got, want)
	}
	if d := take(t, l, other, 3); !d.Allowed {
		t.Fatalf("another organisation: %+v", d)
	}
	c.add(19 * time.Second)
	if d := take(t, l, org, 3); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("19 s later: %+v", d)
	}
	c.add(time.Second)
	if d := take(t, l, org, 3); !d.Allowed {
		t.Fatalf("20 s later: %+v", d)
	}
	if d := take(t, l, org, 3); d.Allowed {
		t.Fatalf("and only one: %+v", d)
	}
}

// Without a test clock the buckets run on Redis's own.
func TestLimiterOnRedisClock(t *testing.T) {
	t.Parallel()
	l := callrate.NewLimiter(newRedis(t), nil)
	org := uuid.NewString()
	if d := take(t, l, org, 1); !d.Allowed {
		t.Fatalf("first: %+v", d)
	}
	d := take(t, l, org, 1)
	if d.Allowed || d.RetryAfter <= 50*time.Second || d.RetryAfter > time.Minute {
		t.Fatalf("second: %+v", d)
	}
}

// No limit costs no round trip; a Redis that does not answer lets calls
// through and says so.
func TestLimiterUnlimitedAndRedisDown(t *testing.T) {
	t.Parallel()
	l := callrate.NewLimiter(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), nil)
	if d, err := l.Take(context.Background(), uuid.NewString(), 0); !d.Allowed || err != nil {
		t.Fatalf("no limit: %+v %v", d, err)
	}
	d, err := l.Take(context.Background(), uuid.NewString(), 3)
	if !d.Allowed || err == nil || !strings.Contains(err.Error(), "goes through") {
		t.Fatalf("redis down: %+v %v", d, err)
	}
}

func TestSettingsStoredAndChecked(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	var org string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if n, err := callrate.Get(ctx, db, org); n != 0 || err != nil {
		t.Fatalf("unset: %d %v", n, err)
	}
	three := 3
	if s, err := callrate.Set(ctx, db, org, callrate.SettingsInput{ToolCallsPerMinute: &three}); err != nil || s.ToolCallsPerMinute != 3 {
		t.Fatalf("set: %+v %v", s, err)
	}
	if s, err := callrate.Set(ctx, db, org, callrate.SettingsInput{}); err != nil || s.ToolCallsPerMinute != 3 {
		t.Fatalf("an empty change keeps it: %+v %v", s, err)
	}
	bad := -1
	_, err := callrate.Set(ctx, db, org, callrate.SettingsInput{ToolCallsPerMinute: &bad})
	var ve *validation.Error
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "tool_calls_per_minute") {
		t.Fatalf("negative: %v", err)
	}
	if n, _ := callrate.Get(ctx, db, org); n != 3 {
		t.Fatalf("a refused change lost the setting: %d", n)
	}
}
