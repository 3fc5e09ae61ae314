package run_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkAuditRowCost is the audit row's share of a quick native call
// (noop through Activities.Tool: the stored-call check, run and snapshot,
// the handler, and the result transaction that holds the call row, its
// message and its audit row), the goal being under 5 % of the call's
// median. The row is one INSERT in a transaction the call commits anyway,
// so its cost is that statement: measured alone in an open transaction,
// alternating with whole calls in one loop so a passing load falls on both.
func BenchmarkAuditRowCost(b *testing.B) {
	db := testdb.New(b)
	g := newGuardedRun(b, db, "", runact.Deps{Tools: noopRegistry(), Log: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	var calls, rows []time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if i%2 == 0 {
			g.seq++
			in := runact.ToolInput{RunID: g.runID, Seq: g.seq, CallID: "call_" + strconv.Itoa(g.seq), Name: "noop", Arguments: `{}`, Remaining: 1 << 20}
			start := time.Now()
			out, err := g.acts.Tool(ctx, in)
			calls = append(calls, time.Since(start))
			if err != nil || out.Outcome != runs.OutcomeOK {
				b.Fatalf("%s %q %v", out.Outcome, out.Result, err)
			}
			continue
		}
		tx, err := db.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		e := audit.Event{OrganisationID: g.org, RunID: g.runID, Seq: 1, Trigger: runs.TriggerDirect, Action: audit.ActionToolCall,
			Tool: "noop", Kind: "native", ArgsDigest: "sha256:0", Outcome: runs.OutcomeOK, Actor: "agent:bench"}
		start := time.Now()
		err = audit.Record(ctx, tx, e)
		rows = append(rows, time.Since(start))
		_ = tx.Rollback(ctx)
		if err != nil {
			b.Fatal(err)
		}
	}
	if len(calls) < 20 {
		b.Logf("%d calls: too few for figures (use -benchtime 400x or more)", len(calls))
		return
	}
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds()) / 1e3
	}
	b.ReportMetric(med(calls), "call-p50-µs")
	b.ReportMetric(med(rows), "audit-row-p50-µs")
	b.ReportMetric(100*med(rows)/med(calls), "audit-share-%")
}
