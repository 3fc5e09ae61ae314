package devserver

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startOrTimeout runs Start and fails the test if it does not return
// before the context ends (a hang, not a slow start).
func startOrTimeout(t *testing.T, o Options) (*Server, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		s   *Server
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Start(ctx, o)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		t.Fatal("Start did not return")
		return nil, nil
	}
}

// TestChildExitingEarlyIsReported: a server that dies during start-up is
// reported with its last words, and Start never waits on it forever.
func TestChildExitingEarlyIsReported(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "temporal")
	script := "#!/bin/sh\necho 'Error: unable to start server: listen tcp: something broke' >&2\nexit 3\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := startOrTimeout(t, Options{Binary: bin})
	if err == nil || !strings.Contains(err.Error(), "exited during start-up") || !strings.Contains(err.Error(), "something broke") {
		t.Fatalf("err = %v", err)
	}
}

// TestTakenPortIsRefusedBeforeStarting: with the frontend or the UI port
// taken, nothing is started and the error says which port.
func TestTakenPortIsRefusedBeforeStarting(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	taken := l.Addr().(*net.TCPAddr).Port
	free, _ := FreePort()
	for _, o := range []Options{{Port: taken}, {Port: free, UIPort: taken}} {
		o.Binary = "/nonexistent/temporal" // starting anything would fail differently
		_, err := startOrTimeout(t, o)
		var inUse *PortInUseError
		if !errors.As(err, &inUse) || inUse.Port != taken || inUse.UI != (o.UIPort == taken) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
}

// TestListensOnNamesTheOwner: a port held by another process is never
// taken for our child's.
func TestListensOnNamesTheOwner(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	if ok, err := listensOn(os.Getpid(), port); !ok || err != nil {
		t.Fatalf("own listener: %v %v", ok, err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if ok, err := listensOn(child.Process.Pid, port); ok || err != nil {
		t.Fatalf("another process's listener counted as the child's: %v %v", ok, err)
	}
}

// TestStartsAndStops: the real CLI starts, is recognised as ours, and stops.
func TestStartsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	if _, err := FindBinary(); err != nil {
		t.Skip(err)
	}
	s, err := startOrTimeout(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop() // a second Stop returns at once
}

// TestChildGetsNoCredentials: the dev server runs with a minimal
// environment, never the encryption key or database URL guilds dev was given.
func TestChildGetsNoCredentials(t *testing.T) {
	t.Setenv("GUILDS_ENCRYPTION_KEY", "k1:must-not-reach-the-child")
	bin := filepath.Join(t.TempDir(), "temporal")
	out := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nenv > "+out+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := startOrTimeout(t, Options{Binary: bin}); err == nil {
		t.Fatal("the fake server exits; Start should say so")
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "must-not-reach-the-child") || !strings.Contains(string(env), "PATH=") {
		t.Fatalf("child environment:\n%s", env)
	}
}
