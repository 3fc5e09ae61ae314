//go:build linux

package channel

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// Server runs the commands the worker sends, as its own user, in the
// sandbox it keeps.
type Server struct {
	Token string
	Log   *slog.Logger
	reap  *reaper
	once  sync.Once
}

// Serve answers connections on l until it fails.
func (s *Server) Serve(l net.Listener) error {
	s.once.Do(func() {
		s.reap = newReaper()
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
	})
	for {
		conn, err := l.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return err
		}
		go s.handle(conn)
	}
}

// Reap reaps children without serving, for a keeper whose channel could
// not be set up.
func (s *Server) Reap() {
	s.once.Do(func() { s.reap = newReaper() })
}

func (s *Server) handle(conn net.Conn) {
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := serverHello(conn, s.Token); err != nil {
		if errors.Is(err, ErrRefused) {
			s.Log.Warn("channel: a client without the token was refused")
			_ = s.exit(conn, nil, Exit{Code: -1, Error: refused})
		}
		return
	}
	kind, p, err := readFrame(conn, nil)
	if err != nil || kind != kindRequest {
		_ = s.exit(conn, nil, Exit{Code: -1, Error: "the first frame must be the request"})
		return
	}
	var req Request
	if err := json.Unmarshal(p, &req); err != nil {
		_ = s.exit(conn, nil, Exit{Code: -1, Error: "request: " + err.Error()})
		return
	}
	_ = conn.SetDeadline(time.Time{})
	var mu sync.Mutex
	switch req.Op {
	case "", "exec":
		_ = s.exit(conn, &mu, s.run(conn, &mu, req))
	case "park":
		_ = s.exit(conn, &mu, s.park(req.Clear))
	default:
		_ = s.exit(conn, &mu, Exit{Code: -1, Error: fmt.Sprintf("unknown op %q", req.Op)})
	}
}

func (s *Server) exit(conn net.Conn, mu *sync.Mutex, x Exit) error {
	if mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	p, _ := json.Marshal(x)
	return writeFrame(conn, kindExit, p)
}

// run starts the command in a process group of its own, streams its
// output in frames and waits for it, its output's end, its timeout or the
// client's going away, whichever is first.
func (s *Server) run(conn net.Conn, mu *sync.Mutex, req Request) Exit {
	if len(req.Cmd) == 0 || req.TimeoutMS <= 0 || req.MaxOutput <= 0 {
		return Exit{Code: -1, Error: "request: a command, a timeout and an output cap are required"}
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	for k, v := range req.Env {
		env[k] = v
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Exit{Code: -1, Error: err.Error()}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return Exit{Code: -1, Error: err.Error()}
	}
	var inR, inW *os.File
	if req.Stdin {
		inR, inW, err = os.Pipe()
	} else {
		inR, err = os.Open(os.DevNull)
	}
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		_ = errR.Close()
		_ = errW.Close()
		return Exit{Code: -1, Error: err.Error()}
	}
	// The shell gives the PATH lookup, messages and exit codes (126, 127)
	// a command gets through the engine's exec.
	argv := append([]string{"/bin/sh", "-c", `exec "$@"`, "guilds-exec"}, req.Cmd...)
	pid, status, err := s.reap.start(argv, &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   sandbox.EnvList(env),
		Files: []uintptr{inR.Fd(), outW.Fd(), errW.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		if inW != nil {
			_ = inW.Close()
		}
		return Exit{Code: -1, Error: fmt.Sprintf("start %s in %s: %v", req.Cmd[0], req.Dir, err)}
	}

	var truncated bool
	var tmu sync.Mutex
	pump := func(r *os.File, kind byte, done *sync.WaitGroup) {
		defer done.Done()
		defer func() { _ = r.Close() }()
		buf := make([]byte, 32<<10)
		left := req.MaxOutput
		for {
			n, err := r.Read(buf)
			if n > 0 {
				keep := min(n, left)
				if keep < n {
					tmu.Lock()
					truncated = true
					tmu.Unlock()
				}
				if keep > 0 {
					left -= keep
					mu.Lock()
					_ = writeFrame(conn, kind, buf[:keep])
					mu.Unlock()
				}
			}
			if err != nil {
				return
			}
		}
	}
	var outputs sync.WaitGroup
	outputs.Add(2)
	go pump(outR, kindStdout, &outputs)
	go pump(errR, kindStderr, &outputs)
	drained := make(chan struct{})
	go func() { outputs.Wait(); close(drained) }()

	gone := make(chan struct{})
	go func() {
		defer close(gone)
		s.readInput(conn, inW)
	}()

	timer := time.NewTimer(time.Duration(req.TimeoutMS) * time.Millisecond)
	defer timer.Stop()
	var ws syscall.WaitStatus
	exited, outDone := false, false
	waitOut := drained // nil once seen closed, so the select does not spin on it
	for !exited || !outDone {
		select {
		case ws = <-status:
			exited = true
			status = nil
		case <-waitOut:
			outDone = true
			waitOut = nil
		case <-timer.C:
			killGroup(pid)
			s.settle(drained)
			return Exit{Code: sandbox.ExitTimeout, TimedOut: true, Truncated: isTruncated(&tmu, &truncated)}
		case <-gone:
			killGroup(pid)
			s.settle(drained)
			return Exit{Code: -1, Error: "the client went away"}
		}
	}
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return Exit{Code: code, Truncated: isTruncated(&tmu, &truncated)}
}

func isTruncated(mu *sync.Mutex, t *bool) bool {
	mu.Lock()
	defer mu.Unlock()
	return *t
}

// settle waits for a killed command's output to end; a process that left
// the group may hold it open, so the wait is bounded.
func (s *Server) settle(drained chan struct{}) {
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		s.Log.Warn("channel: a killed command's output is still held open")
	}
}

// readInput feeds stdin frames to the command; once input ends it keeps
// reading, so that the connection's closing (the client gave up) is seen.
func (s *Server) readInput(conn net.Conn, in *os.File) {
	buf := make([]byte, 0, maxFrame)
	for {
		kind, p, err := readFrame(conn, buf)
		if err != nil || kind != kindStdin {
			if in != nil {
				_ = in.Close()
			}
			return
		}
		if in == nil {
			continue
		}
		if len(p) == 0 {
			_ = in.Close()
			in = nil
			continue
		}
		if _, err := in.Write(p); err != nil {
			_ = in.Close()
			in = nil
		}
	}
}
