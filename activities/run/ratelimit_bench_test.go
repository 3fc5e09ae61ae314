package run_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkCallRateCost is what the organisation's call rate adds to a quick
// native call (noop) made by the tool activity, Activities.Tool, called
// directly: the stored-call check, run and snapshot, the handler, the call
// row, its message and its audit row. Three settings, one call each in
// turn within one loop, so a load that comes and goes falls on all alike:
//
//   - off: no limiter wired (Deps.CallRate nil);
//   - unlimited: the limiter wired and no rate set, the default: one read of
//     the organisation's setting in PostgreSQL;
//   - limited: a rate set (so high nothing is refused): that read and the
//     bucket script in Redis.
//
// It reports each setting's median and p95 per call, and the medians' extra
// over off.
func BenchmarkCallRateCost(b *testing.B) {
	db := testdb.New(b)
	rdb := testRedis(b)
	quiet := slog.New(slog.DiscardHandler)
	limiter := callrate.NewLimiter(rdb, nil)
	reg := noopRegistry()
	free := newGuardedRun(b, db, "", runact.Deps{Tools: reg, CallRate: limiter, Log: quiet})
	capped := newGuardedRun(b, db, "", runact.Deps{Tools: reg, CallRate: limiter, Log: quiet})
	setRate(b, capped, callrate.MaxPerMinute)
	off := runact.New(runact.Deps{DB: db, Tools: reg, Log: quiet, Heartbeat: time.Second})

	type mode struct {
		name string
		acts *runact.Activities
		g    *guardedRun
		lat  []time.Duration
	}
	modes := []*mode{{name: "off", acts: off, g: free}, {name: "unlimited", acts: free.acts, g: free}, {name: "limited", acts: capped.acts, g: capped}}
	ctx := context.Background()
	b.ReportAllocs()
	// Each round of three takes the settings in one of the six orders, so
	// that none always follows the same other.
	orders := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	i := 0
	for b.Loop() {
		m := modes[orders[(i/3)%len(orders)][i%3]]
		i++
		m.g.seq++
		in := runact.ToolInput{RunID: m.g.runID, Seq: m.g.seq, CallID: "call_" + strconv.Itoa(m.g.seq), Name: "noop", Arguments: `{}`, Remaining: 1 << 20}
		start := time.Now()
		out, err := m.acts.Tool(ctx, in)
		m.lat = append(m.lat, time.Since(start))
		if err != nil || out.Outcome != runs.OutcomeOK {
			b.Fatalf("%s: %s %q %v", m.name, out.Outcome, out.Result, err)
		}
	}
	if i < 3*20 {
		b.Logf("%d calls: too few for figures (use -benchtime 600x or more)", i)
		return
	}
	p50 := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds()) / 1e3
	}
	p95 := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)*95/100].Nanoseconds()) / 1e3
	}
	base := p50(modes[0].lat)
	for _, m := range modes {
		b.ReportMetric(p50(m.lat), m.name+"-p50-µs")
		b.ReportMetric(p95(m.lat), m.name+"-p95-µs")
		if m != modes[0] {
			b.ReportMetric(100*(p50(m.lat)-base)/base, m.name+"-extra-%")
		}
	}
}
