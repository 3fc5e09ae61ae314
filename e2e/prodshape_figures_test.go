package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// shapeMonitor samples, while the harness runs, the platform database's
// connections (pg_stat_activity), the runs in flight and the workers' RSS
// (/proc). Samples are taken on a ticker and only their peaks are kept: a
// figure to log, never to assert.
type shapeMonitor struct {
	mu          sync.Mutex
	pids        []int
	idleRSS     int64 // one worker's RSS before any run
	peakConns   int
	peakActive  int   // connections running a statement
	peakRuns    int   // runs queued or running
	peakRSS     int64 // the live workers' RSS together
	perRunBytes int64 // (RSS − idle × live workers) ÷ runs in flight, at the peak RSS
	stop        chan struct{}
	done        chan struct{}
}

func startShapeMonitor(t *testing.T, db *pgxpool.Pool, dbName string, worker int) *shapeMonitor {
	m := &shapeMonitor{pids: []int{worker}, idleRSS: rss(worker), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			var conns, active, runs int
			// Errors are expected while the database restarts: that sample is skipped.
			err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'active'),
				(SELECT count(*) FROM runs WHERE status IN ('queued', 'running'))
				FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName).Scan(&conns, &active, &runs)
			cancel()
			if err != nil {
				continue
			}
			m.sample(conns, active, runs)
		}
	}()
	t.Cleanup(m.finish)
	return m
}

func (m *shapeMonitor) sample(conns, active, runs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	live := 0
	for _, pid := range m.pids {
		if r := rss(pid); r > 0 {
			total += r
			live++
		}
	}
	m.peakConns, m.peakActive, m.peakRuns = max(m.peakConns, conns), max(m.peakActive, active), max(m.peakRuns, runs)
	if total > m.peakRSS {
		m.peakRSS = total
		if runs > 0 {
			m.perRunBytes = (total - m.idleRSS*int64(live)) / int64(runs)
		}
	}
}

// watch adds a worker process to the RSS samples.
func (m *shapeMonitor) watch(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pids = append(m.pids, pid)
}

func (m *shapeMonitor) finish() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

func (m *shapeMonitor) log(t *testing.T) {
	m.finish()
	m.mu.Lock()
	defer m.mu.Unlock()
	t.Logf("postgres connections of the platform's database: peak %d (peak active %d), runs in flight: peak %d", m.peakConns, m.peakActive, m.peakRuns)
	t.Logf("worker RSS: %.1f MiB idle (one worker), %.1f MiB peak (live workers together), about %.2f MiB per run in flight",
		float64(m.idleRSS)/(1<<20), float64(m.peakRSS)/(1<<20), float64(m.perRunBytes)/(1<<20))
}

// rss is a process's resident set in bytes, 0 once it has exited.
func rss(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscan(v, &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// logModelDispatch reads the runs' histories on Temporal's server: from a
// model turn's activity completing to the workflow task that reads its answer
// starting, the part of a turn's dispatch the server and the workers' pollers
// own (docs/scaling.md's "model turn dispatch" on the dev server also counts
// the workflow code up to the first call, a few ms more).
func logModelDispatch(t *testing.T, c client.Client, runIDs []string) {
	var after []time.Duration
	for _, id := range runIDs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		it := c.GetWorkflowHistory(ctx, "run-"+id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		types := map[int64]string{}
		var modelDone time.Time
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Logf("history of run %s: %v", id, err)
				break
			}
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				types[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				if types[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] == "model" {
					modelDone = ev.GetEventTime().AsTime()
				}
			case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				if !modelDone.IsZero() {
					after = append(after, ev.GetEventTime().AsTime().Sub(modelDone))
					modelDone = time.Time{}
				}
			}
		}
		cancel()
	}
	if len(after) == 0 {
		t.Logf("model turn dispatch: no model turn found in the histories")
		return
	}
	slices.Sort(after)
	at := func(p int) time.Duration {
		return after[min(len(after)*p/100, len(after)-1)].Round(100 * time.Microsecond)
	}
	t.Logf("model turn dispatch (history: model activity completed → the next workflow task started) n=%d p50 %v p95 %v p99 %v",
		len(after), at(50), at(95), at(99))
}
