package schedule_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/schedules"
)

// firingDelays pairs each firing's due time (schedule_firings.due_at, which
// is Temporal's TemporalScheduledStartTime) with the arrival of its run's
// first model request, in order: the firings run one after another.
func (e *env) firingDelays(b *testing.B, n int) []time.Duration {
	ctx := context.Background()
	rows, err := e.db.Query(ctx, `SELECT due_at FROM schedule_firings WHERE run_id IS NOT NULL ORDER BY due_at LIMIT $1`, n)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var dues []time.Time
	for rows.Next() {
		var d time.Time
		if err := rows.Scan(&d); err != nil {
			b.Fatal(err)
		}
		dues = append(dues, d)
	}
	_, at := e.model.requests()
	if len(at) < len(dues) {
		b.Fatalf("%d model requests for %d firings", len(at), len(dues))
	}
	out := make([]time.Duration, len(dues))
	for i := range dues {
		out[i] = at[i].Sub(dues[i])
	}
	return out
}

func reportDelays(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	pct := func(p float64) time.Duration { return d[int(p*float64(len(d)-1)+0.5)] }
	b.ReportMetric(float64(pct(0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(pct(0.95).Milliseconds()), "p95-ms")
	b.ReportMetric(float64(d[len(d)-1].Milliseconds()), "max-ms")
}

// BenchmarkTriggeredFiringDelay: the delay from a firing's due time to its
// run's first model turn, for firings made with the Schedule's trigger
// (Temporal's scheduled start time is the trigger's), one after another and
// each on a second of its own, on
// the dev server. Run with -benchtime=20x.
func BenchmarkTriggeredFiringDelay(b *testing.B) {
	e := newEnv(b, true)
	ctx := context.Background()
	s := e.create(cronInput("0 3 1 1 *"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Temporal names a firing by its second: one trigger per second.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		if err := e.mgr.Trigger(ctx, s); err != nil {
			b.Fatal(err)
		}
		eventually(b, time.Minute, "the run", func() bool {
			return e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`) == i+1
		})
	}
	b.StopTimer()
	reportDelays(b, e.firingDelays(b, b.N))
}

// BenchmarkCronFiringDelay: the same delay for real cron firings, every
// minute (a row stored past the 5-minute rule, its Schedule made by
// reconciliation, in a namespace of its own). One firing a minute: -benchtime=20x
// takes twenty minutes.
func BenchmarkCronFiringDelay(b *testing.B) {
	e := newEnv(b, false)
	e.isolated()
	e.startWorker()
	ctx := context.Background()
	c, err := schedules.ParseCron("* * * * *")
	if err != nil {
		b.Fatal(err)
	}
	s, err := schedules.Insert(ctx, e.db, schedules.Checked{New: schedules.New{AgentID: e.agent, Kind: schedules.KindCron,
		Cron: c.String(), Description: "every minute", Instruction: instruction}, Cron: c}, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.mgr.Delete(context.Background(), e.db, s) })
	if r, err := e.mgr.Reconcile(ctx, e.db, time.Hour); err != nil || r.Created != 1 {
		b.Fatalf("reconcile %+v %v", r, err)
	}
	b.ResetTimer()
	eventually(b, time.Duration(b.N+2)*time.Minute, "the firings", func() bool {
		return e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`) >= b.N
	})
	b.StopTimer()
	reportDelays(b, e.firingDelays(b, b.N))
}
