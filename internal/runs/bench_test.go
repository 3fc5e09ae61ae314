package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// The time from a message's commit to its event on a follower's stream: the
// 250 ms poll against a follower woken by LISTEN/NOTIFY. One op is one
// message appended and received.
func BenchmarkEventDelivery(b *testing.B) {
	for _, mode := range []string{"poll", "notify"} {
		b.Run(mode, func(b *testing.B) {
			db := testdb.New(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var l *runs.Listener
			if mode == "notify" {
				l = runs.NewListener(db.Config().ConnConfig.Copy(), nil)
				go l.Run(ctx)
				for !l.Listening() {
					time.Sleep(time.Millisecond)
				}
			}
			r := newRun(b, db)
			seen := make(chan int, 1)
			go runs.Follow(ctx, db, r.ID, 1, l, func(ev runs.Event) error { //nolint:errcheck
				if ev.Message != nil {
					seen <- ev.Message.Seq
				}
				return nil
			})
			b.ReportAllocs()
			seq := 1
			for b.Loop() {
				seq++
				if _, err := runs.AppendMessage(ctx, db, runs.Message{RunID: r.ID, Seq: seq, Role: runs.RoleAssistant, Content: "x"}); err != nil {
					b.Fatal(err)
				}
				for got := <-seen; got != seq; got = <-seen {
				}
			}
		})
	}
}
