package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
)

// hostBrowser returns a Config that runs the host's Chromium on a free
// port with a fresh home, and stops that browser when the test ends.
// Without Chromium the test is skipped, except under CI, where it fails.
func hostBrowser(t *testing.T) Config {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := Config{Home: t.TempDir(), CDPAddr: addr, Chromium: bin, Self: helperBinary(t)}.withDefaults()
	t.Cleanup(func() { stopBrowser(cfg) })
	return cfg
}

// stopBrowser ends the browser the helper started (its whole session).
func stopBrowser(cfg Config) {
	raw, err := os.ReadFile(filepath.Join(cfg.stateDir(), "chromium.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for range 50 {
			if syscall.Kill(pid, 0) != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// fixtures serves testdata on loopback, plus a 404.
func fixtures(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata")))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no such page", http.StatusNotFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// call runs one tool and returns its text.
func call(t *testing.T, cfg Config, tool string, args any) string {
	t.Helper()
	resp := callResp(t, cfg, tool, args)
	return resp.Text
}

func callResp(t *testing.T, cfg Config, tool string, args any) browserproto.Response {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Serve(ctx, cfg, browserproto.Request{Tool: tool, Args: raw})
}

// ok fails the test when the result is an error.
func ok(t *testing.T, text string) string {
	t.Helper()
	if strings.HasPrefix(text, "ERROR") {
		t.Fatalf("unexpected error: %s", text)
	}
	return text
}

var refRe = regexp.MustCompile(`\[ref=((?:f[0-9]+)?e[0-9]+)\]`)

// refOf returns the ref on the first snapshot line that contains all of
// the parts.
func refOf(t *testing.T, snap string, parts ...string) string {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if m := refRe.FindStringSubmatch(line); all && m != nil {
			return m[1]
		}
	}
	t.Fatalf("no line with a ref holds %q in:\n%s", parts, snap)
	return ""
}

var (
	helperOnce sync.Once
	helperPath string
	helperErr  error
)

// helperBinary builds guilds-browser once: the tests' browser gets its
// dialog watcher from it, as in a sandbox.
func helperBinary(t *testing.T) string {
	t.Helper()
	helperOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guilds-browser-test")
		if err != nil {
			helperErr = err
			return
		}
		helperPath = filepath.Join(dir, "guilds-browser")
		out, err := exec.Command("go", "build", "-o", helperPath, "github.com/guilds/guilds/cmd/guilds-browser").CombinedOutput()
		if err != nil {
			helperErr = fmt.Errorf("build guilds-browser: %v\n%s", err, out)
		}
	})
	if helperErr != nil {
		t.Fatal(helperErr)
	}
	return helperPath
}
