package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/server"
	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
)

// TestProductionShape runs the platform as a production install is shaped:
// Temporal's own server on PostgreSQL (not the dev server), two API replicas
// and two workers. While runs that call a native tool and an OAuth login's
// tool are in flight, one API replica is killed under a client following a
// run's events, Temporal's server stops, the second worker starts while it is
// down, the first worker is killed, the login's access token expires,
// Temporal's server comes back, and the platform's PostgreSQL restarts (a
// failover as its clients see it). Before the runs, the login is connected
// through a callback whose replica dies under it. Every run must complete
// with every call stored once with its result, the follower must miss no
// message, the login's code must be exchanged once and its token refreshed
// once, not once per worker.
func TestProductionShape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal's server and the platform as separate processes")
	}
	tsrv := startTemporalOnPostgres(t)
	// The platform's database is on a cluster of the test's own, so that
	// restarting it touches no one else's tests.
	pg := startPrivatePostgres(t)
	const dbName = "guilds"

	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true)), nil)
	// make prod-shape sets a larger load; make test runs the short variant.
	turns, runsN := envCount(t, "PROD_TURNS", 4), envCount(t, "PROD_RUNS", 8)
	model := newConversationModel(t, boxModelKey, turns)
	d := deployOn(t, tsrv.addr, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"DATABASE_URL": pg.URL(dbName)})
	api2 := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	d.startAs("serve-2", "serve", map[string]string{"GUILDS_HTTP_ADDR": api2})
	waitReadyAt(t, "http://"+api2)

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)

	// A pool, not one connection: it reconnects after the database restarts.
	db, err := pgxpool.New(context.Background(), d.vars["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	// The login's callback lands on the second replica, which dies under it;
	// the browser retries on the first. The replica then comes back.
	connectAcmeKillingCallback(t, d, db, as, rs.URL+"/mcp", org, "serve-2", "http://"+api2, d.API)
	d.startAs("serve-2", "serve", map[string]string{"GUILDS_HTTP_ADDR": api2})
	waitReadyAt(t, "http://"+api2)
	count := func(q string, args ...any) int {
		var n int
		if err := db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	mon := startShapeMonitor(t, db, dbName, d.procs["worker"].cmd.Process.Pid)

	// Runs start on both replicas.
	started := time.Now()
	ids := make([]string, runsN)
	for i := range ids {
		api := d.API
		if i%2 == 1 {
			api = "http://" + api2
		}
		ids[i] = d.mustAt(api, 201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": fmt.Sprintf("run %d", i)})["id"].(string)
	}

	// A client follows the first run on the second replica, which dies under
	// it; it reconnects to the first with the last id it saw.
	follower := followRun(t, d, "http://"+api2, ids[0], "")
	waitFor(t, "the follower's first message", func() bool { return follower.last() > 0 })

	// The faults, each once calls are flowing.
	waitFor(t, "a first stored call", func() bool { return count(`SELECT count(*) FROM tool_calls`) > 0 })
	d.kill("serve-2")
	<-follower.done
	rest := followRun(t, d, d.API, ids[0], fmt.Sprint(follower.last()))
	// Temporal goes down; a second worker starts while it is down, waits and
	// says so; the first worker dies; Temporal comes back on the same
	// databases and the second worker carries on every run.
	tsrv.stop()
	d.startAs("worker-2", "worker", nil)
	mon.watch(d.procs["worker-2"].cmd.Process.Pid)
	waitLog(t, d, "worker-2", "waiting for Temporal")
	d.kill("worker")
	as.ExpireAccess()
	tsrv.start(t)
	waitLog(t, d, "worker-2", "worker started")
	// The platform's database restarts under the runs still in flight, once
	// calls flow again after Temporal's restart: every connection of every
	// process is cut, open transactions roll back, and the calls they held
	// are retried, none stored twice.
	restartAt := count(`SELECT count(*) FROM tool_calls`)
	waitFor(t, "calls stored after Temporal's restart", func() bool {
		return count(`SELECT count(*) FROM tool_calls`) > restartAt || count(`SELECT count(*) FROM runs WHERE status IN ('queued', 'running')`) == 0
	})
	inFlight := count(`SELECT count(*) FROM runs WHERE status IN ('queued', 'running')`)
	pg.restart(t)
	db.Reset()
	t.Logf("the platform's database restarted with %d runs in flight", inFlight)

	for _, id := range ids {
		d.waitRunFor(id, 30*time.Minute)
	}
	<-rest.done
	// A stream cut by the restart is resumed as an EventSource would: from
	// the last id seen; on a finished run it sends what is left and ends.
	tail := followRun(t, d, d.API, ids[0], fmt.Sprint(max(follower.last(), rest.last())))
	<-tail.done
	logShapeFigures(t, db, runsN*turns*2, time.Since(started))
	mon.log(t)
	logModelDispatch(t, d.Temporal, ids)

	if got, want := count(`SELECT count(*) FROM tool_calls`), runsN*turns*2; got != want {
		t.Errorf("stored %d tool calls, want %d", got, want)
	}
	if n := count(`SELECT count(*) FROM (SELECT run_id, call_id FROM tool_calls GROUP BY 1, 2 HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d calls stored twice", n)
	}
	rows, err := db.Query(context.Background(), `SELECT tool_name, outcome, coalesce(left(result, 200), ''),
		EXISTS (SELECT 1 FROM messages m WHERE m.run_id = c.run_id AND m.seq = c.seq AND m.role = 'tool')
		FROM tool_calls c`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tool, outcome, result string
		var answered bool
		if err := rows.Scan(&tool, &outcome, &result, &answered); err != nil {
			t.Fatal(err)
		}
		// A call the killed worker was running when it died, of a tool not
		// known to be safe to repeat, is answered "interrupted", not run twice.
		if outcome == "interrupted" && answered {
			t.Logf("call of %s interrupted by the killed worker: %s", tool, result)
			continue
		}
		if outcome != "ok" || !answered {
			t.Errorf("call of %s: outcome %s, result message stored %v: %s", tool, outcome, answered, result)
		}
	}
	rows.Close()
	// The follower saw every message of the run once, across the two replicas.
	seen := append(append(follower.seqs(), rest.seqs()...), tail.seqs()...)
	stored := count(`SELECT count(*) FROM messages WHERE run_id = $1`, ids[0])
	if len(seen) != stored {
		t.Errorf("the follower saw %d messages of %d: %v", len(seen), stored, seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("the follower saw message %d after %d", seen[i], seen[i-1])
		}
	}
	if n := as.Count("code"); n != 1 {
		t.Errorf("the login's code was exchanged %d times, want once", n)
	}
	if n := as.Count("refresh"); n != 1 {
		t.Errorf("the expired token was refreshed %d times, want once", n)
	}
	if t.Failed() {
		t.Logf("platform:\n%s\ntemporal:\n%s", d.Logs(), tsrv.logs)
	}
}

// logShapeFigures logs what make prod-shape reports (docs/scaling.md): the
// wall time and call rate, and how long a call waited from the model's
// answer being stored to its result being stored, by tool. Logged, never
// asserted: the figures depend on the machine.
func logShapeFigures(t *testing.T, db *pgxpool.Pool, calls int, wall time.Duration) {
	t.Helper()
	t.Logf("production shape: %d calls in %.1fs, %.1f calls/s, with a worker killed, an API replica killed twice, Temporal restarted and the database restarted",
		calls, wall.Seconds(), float64(calls)/wall.Seconds())
	rows, err := db.Query(context.Background(), `SELECT c.tool_name,
		percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM c.finished_at - a.created_at))
		FROM tool_calls c CROSS JOIN LATERAL (SELECT created_at FROM messages
			WHERE run_id = c.run_id AND seq < c.seq AND role = 'assistant' ORDER BY seq DESC LIMIT 1) a
		GROUP BY 1 UNION ALL
		SELECT c.tool_name || ' (in call)', percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM c.finished_at - c.started_at))
		FROM tool_calls c GROUP BY 1 UNION ALL
		SELECT 'run', percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at)) FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var p []float64
		if err := rows.Scan(&name, &p); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-20s p50 %.0f ms, p95 %.0f ms, p99 %.0f ms", name, p[0]*1000, p[1]*1000, p[2]*1000)
	}
}

func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

// temporalServer is Temporal's own server on a fresh pair of PostgreSQL
// databases, started by scripts/temporal-postgres.sh.
type temporalServer struct {
	addr, db string
	port     int
	cmd      *exec.Cmd
	exited   chan error
	logs     *testlog.Buffer
}

func startTemporalOnPostgres(t *testing.T) *temporalServer {
	t.Helper()
	script := filepath.Join("..", "scripts", "temporal-postgres.sh")
	if _, err := os.Stat(filepath.Join("..", ".bin", "temporal-server")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Temporal's server is not built: make temporal-server")
		}
		t.Skip("Temporal's server is not built (make temporal-server)")
	}
	s := &temporalServer{db: fmt.Sprintf("guilds_temporal_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9), port: freePortRun(t, 9), logs: &testlog.Buffer{}}
	s.addr = fmt.Sprintf("127.0.0.1:%d", s.port)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, testdb.ServerURL()); err == nil {
			for _, name := range []string{s.db, s.db + "_visibility"} {
				c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") //nolint:errcheck
			}
			_ = c.Close(ctx)
		}
	})
	if out, err := exec.Command(script, "schema", s.db).CombinedOutput(); err != nil {
		t.Fatalf("temporal schema: %v\n%s", err, out)
	}
	s.start(t)
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *temporalServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(filepath.Join("..", "scripts", "temporal-postgres.sh"), "start", s.db, fmt.Sprint(s.port))
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		if c, err := client.Dial(client.Options{HostPort: s.addr}); err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return
			}
		}
		select {
		case err := <-s.exited:
			t.Fatalf("Temporal's server exited: %v\n%s", err, s.logs)
		case <-ctx.Done():
			t.Fatalf("Temporal's server did not answer\n%s", s.logs)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *temporalServer) stop() {
	if s.cmd == nil {
		return
	}
	// Its exit status after a signal says nothing the test checks.
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.exited:
		_ = err
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		err := <-s.exited
		_ = err
	}
	s.cmd = nil
}

// freePortRun finds a port p with p..p+n-1 free: Temporal's services take
// consecutive ports after the frontend's, and its membership table keeps a
// port as a smallint, so the run lies below 32768 (under the ephemeral range).
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(12000)
		free := true
		for i := 0; i < n && free; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				free = false
				continue
			}
			_ = l.Close()
		}
		if free {
			return p
		}
	}
	t.Fatal("no run of free ports")
	return 0
}

// conversationModel answers each conversation by how far it has come: turn k
// of n asks for a note and an echo, then it says it is done. Runs share it.
func newConversationModel(t *testing.T, key string, n int) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if r.Header.Get("Authorization") != "Bearer "+key || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		k := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				k++
			}
		}
		msg := map[string]any{"role": "assistant", "content": "Done."}
		finish := "stop"
		if k < n {
			note, _ := json.Marshal(map[string]any{"level": "agent", "key": fmt.Sprintf("turn-%d.md", k), "content": "noted"})
			echo, _ := json.Marshal(map[string]any{"text": fmt.Sprintf("turn %d", k)})
			msg = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
				map[string]any{"id": fmt.Sprintf("call_note_%d", k), "type": "function", "function": map[string]any{"name": "note_write", "arguments": string(note)}},
				map[string]any{"id": fmt.Sprintf("call_echo_%d", k), "type": "function", "function": map[string]any{"name": "acme_echo", "arguments": string(echo)}},
			}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": finish, "message": msg}}})
	}))
	t.Cleanup(s.Close)
	return s
}

// follower reads a run's event stream and keeps the seq of each message.
type follower struct {
	mu   sync.Mutex
	got  []int
	done chan struct{}
}

func (f *follower) last() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		return 0
	}
	return f.got[len(f.got)-1]
}

func (f *follower) seqs() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.got...)
}

// followRun opens the run's event stream at api, resuming after lastID when
// set, as a reconnecting EventSource does.
func followRun(t *testing.T, d *deployment, api, runID, lastID string) *follower {
	t.Helper()
	req, _ := http.NewRequest("GET", api+"/api/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+d.Token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("follow run %s at %s: %v %v", runID, api, resp, err)
	}
	f := &follower{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var seq int
			if _, err := fmt.Sscanf(sc.Text(), "id: %d", &seq); err == nil {
				f.mu.Lock()
				f.got = append(f.got, seq)
				f.mu.Unlock()
			}
		}
	}()
	return f
}

// waitFor re-checks cond until it holds; ten minutes is only a failure bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s never came", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitLog(t *testing.T, d *deployment, name, line string) {
	t.Helper()
	waitFor(t, name+" saying "+line, func() bool { return strings.Contains(d.logs[name].String(), line) })
}

func waitReadyAt(t *testing.T, api string) {
	t.Helper()
	waitFor(t, api+" ready", func() bool {
		resp, err := http.Get(api + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}
