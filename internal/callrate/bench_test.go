package callrate_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/callrate"
)

// BenchmarkTake is one call taken from a bucket (the script in Redis),
// beside a bare GET on the same client for the round trip alone.
func BenchmarkTake(b *testing.B) {
	rdb := newRedis(b)
	ctx := context.Background()
	b.Run("take", func(b *testing.B) {
		l := callrate.NewLimiter(rdb, nil)
		org := uuid.NewString()
		b.ReportAllocs()
		for b.Loop() {
			if d, err := l.Take(ctx, org, callrate.MaxPerMinute); err != nil || !d.Allowed {
				b.Fatal(d, err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = rdb.Get(ctx, "guilds:callrate:none").Err()
		}
	})
}
