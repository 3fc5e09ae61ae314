package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/devserver"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"migrate"}, {"migrate", "sideways"}, {"migrate", "down", "-1"},
		{"tokens"}, {"tokens", "create"}, {"tokens", "create", "--admin", "--org", "x"}, {"serve", "extra"}} {
		code, _, stderr := runCmd(t, "", args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one clear line", args, code, stderr)
		}
	}
	if code, out, _ := runCmd(t, "", "help"); code != 0 || !strings.Contains(out, "migrate") {
		t.Errorf("help: %d %s", code, out)
	}
	if code, out, _ := runCmd(t, "", "version"); code != 0 || !strings.HasPrefix(out, "guilds ") {
		t.Errorf("version: %d %s", code, out)
	}
}

func TestAuthModeLocalNeedsLoopback(t *testing.T) {
	t.Setenv("GUILDS_AUTH_MODE", "local")
	t.Setenv("GUILDS_HTTP_ADDR", "0.0.0.0:8080")
	code, _, stderr := runCmd(t, "", "serve")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestMigrateAndTokens(t *testing.T) {
	t.Setenv("DATABASE_URL", testdb.URL(t))
	if code, out, stderr := runCmd(t, "", "migrate", "status"); code != 0 || !strings.Contains(out, "001_foundation") || !strings.Contains(out, "applied") {
		t.Fatalf("status: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := runCmd(t, "", "migrate", "down", "all"); code != 0 || !strings.Contains(out, "rolled back") {
		t.Fatalf("down: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := runCmd(t, "", "migrate", "up"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("up: %d %s %s", code, out, stderr)
	}
	code, out, stderr := runCmd(t, "", "tokens", "create", "--admin")
	if code != 0 || !strings.HasPrefix(out, "gld_") {
		t.Fatalf("tokens: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, "", "tokens", "create", "--org", "00000000-0000-0000-0000-000000000000"); code != 1 || !strings.Contains(stderr, "organisation") {
		t.Fatalf("tokens for a missing org: %d %s", code, stderr)
	}
}

func TestUnreachableDatabaseIsOneClearLine(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/guilds?connect_timeout=2")
	code, _, stderr := runCmd(t, "", "migrate", "status")
	if code != 1 || !strings.Contains(stderr, "DATABASE_URL") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// syncBuffer is written by the dev command and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDevServesInstanceAndTemporalUI runs `guilds dev` as a user would, with its own
// Temporal dev server and UI, and checks the printed token opens /api/instance.
func TestDevServesInstanceAndTemporalUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server with its UI")
	}
	apiPort, _ := devserver.FreePort()
	tPort, _ := devserver.FreePort()
	uiPort, _ := devserver.FreePort()
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("GUILDS_HTTP_ADDR", fmt.Sprintf("127.0.0.1:%d", apiPort))
	t.Setenv("GUILDS_DEV_TEMPORAL_PORT", fmt.Sprint(tPort))
	t.Setenv("GUILDS_DEV_TEMPORAL_UI_PORT", fmt.Sprint(uiPort))
	t.Setenv("GUILDS_DATA_DIR", t.TempDir())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"dev"}, strings.NewReader(""), &out, io.Discard) }()

	var token string
	for i := 0; i < 600 && token == ""; i++ {
		select {
		case code := <-done:
			t.Fatalf("guilds dev exited %d: %s", code, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			if f := strings.TrimSpace(sc.Text()); strings.HasPrefix(f, "gld_") {
				token = f
			}
		}
	}
	if token == "" {
		t.Fatalf("no admin token printed: %s", out.String())
	}
	for _, want := range []string{"API:", "Temporal:", "PostgreSQL:", fmt.Sprintf("http://127.0.0.1:%d", uiPort)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("start-up banner lacks %q:\n%s", want, out.String())
		}
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/api/instance", apiPort), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/api/instance: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", apiPort))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	var uiOK bool
	for i := 0; i < 50 && !uiOK; i++ {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", uiPort)); err == nil {
			uiOK = resp.StatusCode == 200
			resp.Body.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !uiOK {
		t.Error("the Temporal UI does not answer")
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("guilds dev stopped with %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("guilds dev did not stop after cancellation")
	}
	if !strings.Contains(out.String(), "stopped") {
		t.Error("no stop message")
	}
}
