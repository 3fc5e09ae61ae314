// Package testtemporal gives integration tests a real Temporal server: the one at
// TEMPORAL_ADDRESS when set (make test starts one), else a dev server started once
// per test binary and stopped by Main.
package testtemporal

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/guilds/guilds/internal/devserver"
)

var (
	namespaces atomic.Int64
	once       sync.Once
	address    string
	server     *devserver.Server
	err        error
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

// Namespace registers a fresh namespace, with no custom search attributes, and
// returns its name once the frontend serves it. A namespace cannot be deleted
// cheaply, so it stays on the server (a dev server forgets it when it stops).
func Namespace(t testing.TB) string {
	t.Helper()
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := fmt.Sprintf("test-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9, namespaces.Add(1))
	_, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	if err != nil {
		t.Fatalf("testtemporal: register namespace: %v", err)
	}
	// The frontend learns of a new namespace on its next registry refresh;
	// a namespace-scoped read succeeds once it has.
	for {
		_, err := c.WorkflowService().CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: name})
		if err == nil {
			return name
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testtemporal: namespace %s is not served: %v", name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
