package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/devserver"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
)

// TestDevRefusesATakenTemporalPort: a Temporal server already on the dev
// port (common for Temporal users) makes `guilds dev` say so in one line,
// naming the variable that picks another port, and exit; it never hangs and
// never runs against that server.
func TestDevRefusesATakenTemporalPort(t *testing.T) {
	for _, tc := range []struct{ taken, variable string }{
		{"GUILDS_DEV_TEMPORAL_PORT", "GUILDS_DEV_TEMPORAL_PORT"},
		{"GUILDS_DEV_TEMPORAL_UI_PORT", "GUILDS_DEV_TEMPORAL_UI_PORT"},
	} {
		t.Run(tc.taken, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = l.Close() }()
			apiPort, _ := devserver.FreePort()
			tPort, _ := devserver.FreePort()
			uiPort, _ := devserver.FreePort()
			t.Setenv("DATABASE_URL", testdb.URL(t))
			t.Setenv("TEMPORAL_ADDRESS", "")
			t.Setenv("GUILDS_HTTP_ADDR", fmt.Sprintf("127.0.0.1:%d", apiPort))
			t.Setenv("GUILDS_DEV_TEMPORAL_PORT", fmt.Sprint(tPort))
			t.Setenv("GUILDS_DEV_TEMPORAL_UI_PORT", fmt.Sprint(uiPort))
			t.Setenv("GUILDS_DATA_DIR", t.TempDir())
			t.Setenv(tc.taken, fmt.Sprint(l.Addr().(*net.TCPAddr).Port))

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var stdout, stderr testlog.Buffer
			done := make(chan int, 1)
			go func() { done <- run(ctx, []string{"dev"}, strings.NewReader(""), &stdout, &stderr) }()
			var code int
			select {
			case code = <-done:
			case <-ctx.Done():
				t.Fatalf("guilds dev did not return with the port taken; stderr: %s", stderr.String())
			}
			line := strings.TrimSpace(stderr.String())
			if code == 0 || strings.Contains(line, "\n") || !strings.Contains(line, "already in use") || !strings.Contains(line, tc.variable) {
				t.Fatalf("exit %d, stderr %q", code, line)
			}
			if bytes.Contains([]byte(stdout.String()), []byte("guilds dev is up")) {
				t.Fatalf("it started anyway: %s", stdout.String())
			}
		})
	}
}
