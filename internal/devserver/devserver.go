// Package devserver runs the Temporal CLI's development server as a child
// process, for `guilds dev` and for tests when no TEMPORAL_ADDRESS is given.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
)

// SearchAttributes are registered on the dev server so runs can be found by them in the UI.
var SearchAttributes = []string{
	"GuildsOrganisation=Keyword",
	"GuildsGuild=Keyword",
	"GuildsAgent=Keyword",
	"GuildsTrigger=Keyword",
}

// Options configure the dev server.
type Options struct {
	Binary    string // path of the temporal CLI; found by FindBinary when empty
	DBFile    string // SQLite file that keeps state across restarts; in-memory when empty
	Port      int    // frontend gRPC port; a free one when zero
	UIPort    int    // Web UI port; the UI is off when zero
	Namespace string
	Output    io.Writer // where the server's own log goes (discarded when nil)
	// UICodecEndpoint is the remote payload codec the Web UI decodes with.
	UICodecEndpoint string
}

// Server is a running dev server.
type Server struct {
	Address string
	UIURL   string
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the child has exited; then exitErr is set
	exitErr error
	tail    *tailWriter // the end of the server's own output, for a start-up failure
}

// PortInUseError says a port the dev server was to listen on is taken, most
// often by another Temporal server: the caller names the setting that moves it.
type PortInUseError struct {
	Port int
	UI   bool // the Web UI's port rather than the frontend's
}

func (e *PortInUseError) Error() string {
	what := "frontend"
	if e.UI {
		what = "Web UI"
	}
	return fmt.Sprintf("port %d (Temporal dev server %s) is already in use, perhaps by another Temporal server", e.Port, what)
}

// FindBinary looks for the Temporal CLI: $TEMPORAL_CLI, then .bin/temporal above the
// working directory (built by `make temporal`), then PATH.
func FindBinary() (string, error) {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p, nil
	}
	dir, _ := os.Getwd()
	for dir != "" {
		p := filepath.Join(dir, ".bin", "temporal")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", errors.New("the Temporal CLI was not found: run `make temporal` (builds .bin/temporal), set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to an existing server")
}

// Start launches the dev server and waits until its frontend answers.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Binary == "" {
		b, err := FindBinary()
		if err != nil {
			return nil, err
		}
		o.Binary = b
	}
	if o.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		o.Port = p
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	// Checked first: a server already on the port would answer our readiness
	// probe, and we would run against a server we did not start.
	if err := checkFree(o.Port); err != nil {
		return nil, &PortInUseError{Port: o.Port}
	}
	if o.UIPort != 0 {
		if err := checkFree(o.UIPort); err != nil {
			return nil, &PortInUseError{Port: o.UIPort, UI: true}
		}
	}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", fmt.Sprint(o.Port),
		"--namespace", o.Namespace, "--log-level", "warn",
		// Eager activity dispatch hands an activity to the worker that scheduled
		// it without a task-queue round trip: 54 ms to 4.7 ms per activity here
		// (docs/adr/0511-fast-path.md). A production cluster sets it the same way.
		"--dynamic-config-value", "system.enableActivityEagerExecution=true",
		// Task queues dispatch by each run's fairness key (its organisation)
		// and priority (its trigger), so one organisation's burst cannot
		// starve another's (docs/adr/0519-fairness-between-organisations.md).
		"--dynamic-config-value", "matching.enableFairness=true"}
	if o.DBFile != "" {
		if err := os.MkdirAll(filepath.Dir(o.DBFile), 0o700); err != nil {
			return nil, err
		}
		args = append(args, "--db-filename", o.DBFile)
	}
	if o.UIPort != 0 {
		args = append(args, "--ui-port", fmt.Sprint(o.UIPort))
		if o.UICodecEndpoint != "" {
			args = append(args, "--ui-codec-endpoint", o.UICodecEndpoint)
		}
	} else {
		args = append(args, "--headless")
	}
	for _, sa := range SearchAttributes {
		args = append(args, "--search-attribute", sa)
	}
	cmd := exec.Command(o.Binary, args...) //nolint:gosec // G204: the Temporal CLI the operator or make built; args are ours
	cmd.Env = childEnv()
	out := o.Output
	if out == nil {
		out = io.Discard
	}
	tail := &tailWriter{}
	cmd.Stdout = io.MultiWriter(out, tail)
	cmd.Stderr = cmd.Stdout
	// Its own process group, so a Ctrl-C aimed at us is handled by us and we stop it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start temporal dev server: %w", err)
	}
	s := &Server{Address: fmt.Sprintf("127.0.0.1:%d", o.Port), cmd: cmd, exited: make(chan struct{}), tail: tail}
	if o.UIPort != 0 {
		s.UIURL = fmt.Sprintf("http://127.0.0.1:%d", o.UIPort)
	}
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx, o.Namespace, o.Port); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, namespace string, port int) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return s.exitedEarly()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		// Only our child's own listener counts: another process that took
		// the port after our check must never be mistaken for our server.
		if owned, err := listensOn(s.cmd.Process.Pid, port); err != nil {
			return err
		} else if !owned {
			continue
		}
		c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: namespace, Logger: quietLogger{}})
		if err != nil {
			continue
		}
		_, err = c.CheckHealth(ctx, nil)
		c.Close()
		if err == nil {
			return nil
		}
	}
	return errors.New("temporal dev server did not become ready within 90s")
}

// exitedEarly describes a child that exited before it was ready.
func (s *Server) exitedEarly() error {
	msg := fmt.Sprintf("temporal dev server exited during start-up (%v)", s.exitErr)
	if last := s.tail.lastLine(); last != "" {
		msg += ": " + last
	}
	return errors.New(msg)
}

// Stop ends the server: SIGTERM, then SIGKILL after a grace period. It
// returns at once when the server has already exited.
func (s *Server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// childEnv is the little of our environment the dev server needs: never the
// encryption key, database URL or model keys that guilds dev was given.
func childEnv() []string {
	var env []string
	for _, name := range []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// checkFree reports an error when a loopback TCP port cannot be bound.
func checkFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// quietLogger drops the SDK's connection chatter while we poll for readiness.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
