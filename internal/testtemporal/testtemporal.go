// Package testtemporal gives integration tests a real Temporal server: the one at
// TEMPORAL_ADDRESS when set (make test starts one), else a dev server started once
// per test binary and stopped by Main.
package testtemporal

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/internal/devserver"
)

var (
	once    sync.Once
	address string
	server  *devserver.Server
	err     error
)

// Address returns the address of a running Temporal frontend.
func Address(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" {
			address = a
			return
		}
		server, err = devserver.Start(context.Background(), devserver.Options{})
		if err == nil {
			address = server.Address
		}
	})
	if err != nil {
		t.Fatalf("testtemporal: %v", err)
	}
	return address
}

// Client dials the test server; the client is closed when the test ends.
func Client(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: Address(t), Namespace: "default"})
	if err != nil {
		t.Fatalf("testtemporal: dial: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Main runs the tests and stops a dev server this package started. Use it from TestMain.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	return code
}

// TaskQueue returns a task queue name unique to the test, so parallel tests never share workers.
func TaskQueue(t testing.TB) string {
	return fmt.Sprintf("test-%s-%d", t.Name(), os.Getpid())
}
