package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/sandbox"
)

func TestWorkerMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		env      environment
		addr     string
		explicit bool
	}{
		{environment{}, defaultWorkerMetricsAddr, false},
		{environment{workerMetricsVar: "0.0.0.0:9500"}, "0.0.0.0:9500", true},
		{environment{workerMetricsVar: ""}, "", true},
		{environment{workerMetricsVar: " OFF "}, "", true},
	} {
		if addr, explicit := workerMetricsAddr(tc.env); addr != tc.addr || explicit != tc.explicit {
			t.Errorf("%v: %q %v, want %q %v", tc.env, addr, explicit, tc.addr, tc.explicit)
		}
	}
}

// TestWorkerServesMetrics: `guilds worker` answers /healthz, then /readyz
// once its Temporal worker polls, and its /metrics has the guilds_* metrics
// of what this process did.
func TestWorkerServesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("uses a Temporal server")
	}
	key, _ := secret.GenerateKey("k1")
	port := freeTCPPort(t)
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", testtemporal.Address(t))
	t.Setenv("TEMPORAL_NAMESPACE", testtemporal.Namespace(t))
	t.Setenv("GUILDS_DATA_DIR", t.TempDir())
	t.Setenv("GUILDS_SANDBOX_DRIVER", "local")
	t.Setenv("GUILDS_SANDBOX_ALLOW_LOCAL", "1")
	t.Setenv(workerMetricsVar, fmt.Sprintf("127.0.0.1:%d", port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr testlog.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"worker"}, strings.NewReader(""), io.Discard, &stderr) }()
	var ready map[string]any
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			ready = map[string]any{}
			_ = json.NewDecoder(resp.Body).Decode(&ready)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-done:
			t.Fatalf("worker exited %d: %s", code, stderr.String())
		case <-ctx.Done():
			t.Fatalf("the worker never became ready (last %v): %s", ready, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	checks, _ := ready["checks"].(map[string]any)
	if ready["ready"] != true || checks["worker"] != "ok" || checks["postgres"] != "ok" || checks["temporal"] != "ok" {
		t.Errorf("/readyz %v", ready)
	}
	if !strings.Contains(stderr.String(), workerStartedMessage) {
		t.Errorf("the worker's log lost its start line: %s", stderr.String())
	}
	// What this process observes is on the worker's /metrics.
	telemetry.SandboxExec(sandbox.ExecResult{ExitCode: 2}.Outcome(nil), time.Millisecond)
	for path, want := range map[string]string{"/metrics": `guilds_sandbox_exec_duration_seconds_count{outcome="nonzero"}`, "/healthz": `"ok"`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, no %s", path, resp.StatusCode, want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("worker exited %d: %s", code, stderr.String())
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the listener outlived the worker")
	}
}

// TestWorkerMetricsAddressTaken: an address the operator chose that is
// taken stops the worker, naming the variable.
func TestWorkerMetricsAddressTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	_, err = listenWorkerHTTP(environment{workerMetricsVar: l.Addr().String()}, nil)
	if err == nil || !strings.Contains(err.Error(), workerMetricsVar) {
		t.Fatalf("err = %v", err)
	}
	ln, err := listenWorkerHTTP(environment{workerMetricsVar: "off"}, nil)
	if ln != nil || err != nil {
		t.Fatalf("off: %v %v", ln, err)
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
