package connectors_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/connectors"
)

// The storm tests run replicas as real processes: the test binary re-executes
// itself in helper mode (TestHelperProcess with helperEnv set). Each helper
// builds its own engine on the shared database and Redis, says "ready", waits
// for "go" on stdin, then hammers one connection from many goroutines and
// prints a JSON summary.

const helperEnv = "GUILDS_CONNECTORS_HELPER"

type helperConfig struct {
	DB, Keys, Redis string
	Conn            string
	Goroutines      int
	Calls           int // per process
	SpreadMS        int // pause between one goroutine's calls
	LeaseMS         int
	RefreshMS       int
	SkewMS          int // -1: no skew
	AheadMS         int // 0: default, -1: disabled
}

type helperResult struct {
	OK     int
	Errors []string
	Tokens map[string]int
}

func TestHelperProcess(t *testing.T) {
	raw := os.Getenv(helperEnv)
	if raw == "" {
		t.Skip("runs only as a helper process of the storm tests")
	}
	var cfg helperConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Println("bad config:", err)
		os.Exit(3)
	}
	os.Exit(runHelper(cfg))
}

type pidTransport struct{}

func (pidTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Pid", strconv.Itoa(os.Getpid()))
	return http.DefaultTransport.RoundTrip(r)
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func runHelper(cfg helperConfig) int {
	timing := connectors.Timing{Lease: ms(cfg.LeaseMS), RefreshTimeout: ms(cfg.RefreshMS), Skew: ms(cfg.SkewMS), RefreshAhead: ms(cfg.AheadMS)}
	eng, err := newEngine(cfg.DB, cfg.Keys, engineOpts{redisURL: cfg.Redis, timing: timing, hc: &http.Client{Transport: pidTransport{}}}, nil)
	if err != nil {
		fmt.Println("engine:", err)
		return 3
	}
	defer eng.Close()
	id := uuid.MustParse(cfg.Conn)
	fmt.Println("ready")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); line != "go\n" {
		return 4
	}
	var mu sync.Mutex
	res := helperResult{Tokens: map[string]int{}}
	var wg sync.WaitGroup
	for g := 0; g < cfg.Goroutines; g++ {
		n := cfg.Calls / cfg.Goroutines
		if g < cfg.Calls%cfg.Goroutines {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if i > 0 && cfg.SpreadMS > 0 {
					time.Sleep(ms(cfg.SpreadMS))
				}
				// Every wait is bounded by the engine; this deadline only
				// turns a hang into a reported failure.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				c, err := eng.Resolver().Token(ctx, id)
				cancel()
				mu.Lock()
				if err != nil {
					res.Errors = append(res.Errors, err.Error())
				} else {
					res.OK++
					res.Tokens[c.AccessToken]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

type helperProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startHelpers(t *testing.T, n int, cfg helperConfig) []*helperProc {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	var hs []*helperProc
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
		cmd.Stderr = os.Stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Most helpers have exited by cleanup, so Kill and Wait report that; ignore it.
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		hs = append(hs, &helperProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)})
	}
	for _, h := range hs {
		line, err := h.out.ReadString('\n')
		if err != nil || line != "ready\n" {
			t.Fatalf("helper did not start: %q %v", line, err)
		}
	}
	return hs
}

func goAll(hs []*helperProc) {
	for _, h := range hs {
		_, _ = io.WriteString(h.stdin, "go\n") // a helper that misses it fails in result
	}
}

func (h *helperProc) result(t *testing.T) helperResult {
	t.Helper()
	line, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper %d: %v", h.cmd.Process.Pid, err)
	}
	var r helperResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("helper %d said %q", h.cmd.Process.Pid, line)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper %d exited: %v", h.cmd.Process.Pid, err)
	}
	return r
}

// checkAll asserts that every call of every helper got the one token.
func checkAll(t *testing.T, rs []helperResult, wantOK int) string {
	t.Helper()
	token := ""
	for i, r := range rs {
		if len(r.Errors) > 0 {
			t.Errorf("helper %d: %d errors, first: %s", i, len(r.Errors), r.Errors[0])
		}
		if r.OK != wantOK {
			t.Errorf("helper %d: %d successful calls, want %d", i, r.OK, wantOK)
		}
		for tok := range r.Tokens {
			if token == "" {
				token = tok
			}
			if tok != token {
				t.Errorf("helpers got different tokens")
			}
		}
	}
	return token
}

func stormSetup(t *testing.T) (*env, uuid.UUID, helperConfig) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{})
	e.connectExpired(t, eng, id)
	return e, id, helperConfig{DB: e.dbURL, Keys: e.keys, Redis: sharedRedisURL, Conn: id.String(),
		Goroutines: 100, Calls: 100, LeaseMS: 3000, RefreshMS: 2000}
}

// TestRefreshStormProcesses: 3 processes × 100 goroutines on one expired
// token: one refresh reaches the provider and everybody gets its token.
func TestRefreshStormProcesses(t *testing.T) {
	e, _, cfg := stormSetup(t)
	hs := startHelpers(t, 3, cfg)
	goAll(hs)
	var rs []helperResult
	for _, h := range hs {
		rs = append(rs, h.result(t))
	}
	tok := checkAll(t, rs, 100)
	if n := e.ts.requests.Load(); n != 1 {
		t.Fatalf("token endpoint saw %d refresh requests, want 1", n)
	}
	if issued := e.ts.allIssued(); tok != issued[len(issued)-2] {
		t.Fatal("callers did not get the refreshed token")
	}
}

// TestRefreshStormRedisDown: the same storm while Redis dies under it; the
// Postgres advisory lock keeps it to one refresh.
func TestRefreshStormRedisDown(t *testing.T) {
	for _, when := range []string{"before_storm", "during_storm"} {
		t.Run(when, func(t *testing.T) {
			e, _, cfg := stormSetup(t)
			stop := startPrivateRedis(t)
			cfg.Redis = privateRedisURL
			hs := startHelpers(t, 3, cfg) // connected to Redis and subscribed
			if when == "before_storm" {
				stop()
			}
			goAll(hs)
			stop()
			var rs []helperResult
			for _, h := range hs {
				rs = append(rs, h.result(t))
			}
			checkAll(t, rs, 100)
			if n := e.ts.requests.Load(); n != 1 {
				t.Fatalf("token endpoint saw %d refresh requests, want 1", n)
			}
		})
	}
}

// TestRefreshHolderKilled: the process holding the refresh lock is SIGKILLed
// while it waits for the token endpoint; another one completes the refresh
// once the lease ends, and every caller of the survivors gets the token.
func TestRefreshHolderKilled(t *testing.T) {
	e, _, cfg := stormSetup(t)
	cfg.LeaseMS, cfg.RefreshMS = 1500, 1000
	var once sync.Once
	killed := make(chan string, 1)
	e.ts.mode = func(w http.ResponseWriter, r *http.Request) bool {
		first := false
		once.Do(func() { first = true })
		if !first {
			return false
		}
		killed <- r.Header.Get("X-Test-Pid")
		<-r.Context().Done() // never answers; the client dies first
		return true
	}
	hs := startHelpers(t, 3, cfg)
	goAll(hs)
	var pid string
	select {
	case pid = <-killed:
	case <-time.After(20 * time.Second):
		t.Fatal("no refresh request arrived")
	}
	var survivors []*helperProc
	for _, h := range hs {
		if strconv.Itoa(h.cmd.Process.Pid) == pid {
			if err := h.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = h.cmd.Wait() // reaps it; the status is the kill
		} else {
			survivors = append(survivors, h)
		}
	}
	if len(survivors) != 2 {
		t.Fatalf("lock holder %s is not one of the helpers", pid)
	}
	var rs []helperResult
	for _, h := range survivors {
		rs = append(rs, h.result(t))
	}
	checkAll(t, rs, 100)
	if n := e.ts.refreshes.Load(); n != 1 {
		t.Fatalf("%d successful refreshes, want 1", n)
	}
	if n := e.ts.requests.Load(); n != 2 {
		t.Fatalf("%d refresh requests, want 2 (the killed one and its successor)", n)
	}
}

// TestRotatingGrantSurvives: a provider that rotates refresh tokens and
// revokes the grant when an old one is reused; 1,000 calls from 3 processes
// over several token lifetimes (refreshed ahead and on expiry) keep the grant.
func TestRotatingGrantSurvives(t *testing.T) {
	e, _, cfg := stormSetup(t)
	e.ts.mu.Lock()
	e.ts.expiresIn = 1
	e.ts.mu.Unlock()
	cfg.SkewMS, cfg.AheadMS = -1, 400
	cfg.Goroutines, cfg.SpreadMS, cfg.Calls = 20, 150, 334 // 1,002 calls in all
	hs := startHelpers(t, 3, cfg)
	goAll(hs)
	total := 0
	for i, h := range hs {
		r := h.result(t)
		total += r.OK
		if len(r.Errors) > 0 {
			t.Errorf("helper %d: %d errors, first: %s", i, len(r.Errors), r.Errors[0])
		}
	}
	e.ts.mu.Lock()
	reuse, revoked := e.ts.reuse, e.ts.revoked
	e.ts.mu.Unlock()
	if reuse || revoked {
		t.Fatal("a refresh token was reused: the grant was revoked")
	}
	if n := e.ts.refreshes.Load(); n < 2 {
		t.Fatalf("only %d refreshes: the test did not span several lifetimes", n)
	}
	if total != 3*cfg.Calls {
		t.Fatalf("%d successful calls, want %d", total, 3*cfg.Calls)
	}
	t.Logf("%d calls, %d refreshes", total, e.ts.refreshes.Load())
}

var privateRedisURL string

// startPrivateRedis runs a redis-server of this test on a unix socket and
// returns a function that kills it. The shared Redis is never touched.
func startPrivateRedis(t *testing.T) (stop func()) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stopOnce sync.Once
	stop = func() { stopOnce.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) } // the status is the kill
	t.Cleanup(stop)
	privateRedisURL = "unix://" + sock
	waitFor(t, "private redis", func() bool {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		_ = c.Close()
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
		defer func() { _ = rdb.Close() }()
		return rdb.Ping(context.Background()).Err() == nil
	})
	return stop
}
