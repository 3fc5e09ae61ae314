package run_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// BenchmarkBreakerCost is what the login's breaker adds to a remote MCP
// call made by the tool activity (Activities.Tool, called directly; the
// mcp-go server in process over Streamable HTTP on loopback): off (no
// breaker wired) and closed (the breaker's row read before the call; a
// healthy login has none, so nothing is written after it), one call each in
// turn within one loop. It reports each one's median and p95 per call and
// the medians' difference.
func BenchmarkBreakerCost(b *testing.B) {
	db := testdb.New(b)
	peer := newFlakyPeer(b)
	g := newGuardedRun(b, db, peer.url, runact.Deps{Tools: tools.NewRegistry(), Breaker: breaker.New(db, breaker.Settings{}, nil)})
	off := g.deps
	off.Breaker = nil
	modes := []struct {
		name string
		acts *runact.Activities
		lat  []time.Duration
	}{{name: "off", acts: runact.New(off)}, {name: "closed", acts: g.acts}}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m := &modes[(i+i/2)%2] // off, closed, closed, off, …: neither always first
		i++
		g.seq++
		start := time.Now()
		out, err := m.acts.Tool(ctx, runact.ToolInput{RunID: g.runID, Seq: g.seq, CallID: "call_" + strconv.Itoa(g.seq),
			Name: g.remote, Arguments: `{"query":"roadmap"}`, Remaining: 1 << 20})
		m.lat = append(m.lat, time.Since(start))
		if err != nil || out.Outcome != runs.OutcomeOK {
			b.Fatalf("%s: %s %q %v", m.name, out.Outcome, out.Result, err)
		}
	}
	if i < 40 {
		b.Logf("%d calls: too few for figures (use -benchtime 400x or more)", i)
		return
	}
	med := func(d []time.Duration, q int) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)*q/100].Nanoseconds()) / 1e3
	}
	for _, m := range modes {
		b.ReportMetric(med(m.lat, 50), m.name+"-p50-µs")
		b.ReportMetric(med(m.lat, 95), m.name+"-p95-µs")
	}
	b.ReportMetric(100*(med(modes[1].lat, 50)-med(modes[0].lat, 50))/med(modes[0].lat, 50), "closed-extra-%")
}
