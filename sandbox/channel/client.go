package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/internal/capbuf"
)

// ErrUnavailable wraps every failure that happened before the command was
// sent: nothing ran, so the caller may run it another way (the engine's
// exec).
var ErrUnavailable = errors.New("channel: unavailable")

const helloTimeout = 5 * time.Second

// Client reaches one sandbox's server.
type Client struct {
	Socket string // host path of the server's socket
	Token  string
}

// Exec runs req (normalised by the caller) through the server. An error
// wrapping ErrUnavailable means nothing ran.
func (c Client) Exec(ctx context.Context, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return c.do(ctx, Request{
		Cmd: req.Cmd, Env: req.Env, Dir: req.Dir, TimeoutMS: req.Timeout.Milliseconds(),
		MaxOutput: req.MaxOutput, Stdin: req.Stdin != nil,
	}, req.Stdin, req.MaxOutput, req.Timeout, nil)
}

// Park ends every process of the sandbox's user but the server and empties
// the folders in clear. It returns how many processes are still alive
// besides the server (another user's).
func (c Client) Park(ctx context.Context, clear ...string) (others int, err error) {
	var x Exit
	res, err := c.do(ctx, Request{Op: "park", Clear: clear, TimeoutMS: 30_000}, nil, 4096, 30*time.Second, &x)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("channel: park: exit %d: %s", res.ExitCode, res.Stderr)
	}
	return x.Others, err
}

// do sends r and collects the answer; exit, when not nil, receives the
// server's exit record.
func (c Client) do(ctx context.Context, r Request, stdin io.Reader, maxOut int, timeout time.Duration, exit *Exit) (sandbox.ExecResult, error) {
	// The folder is writable from inside the sandbox: a command may have
	// put something else under the socket's name, such as a link to a
	// socket of the host. Only a socket is dialled (and the server must
	// still prove the token before anything is sent but a nonce).
	if fi, err := os.Lstat(c.Socket); err != nil || fi.Mode().Type() != os.ModeSocket {
		return sandbox.ExecResult{}, fmt.Errorf("%w: %s is not the server's socket", ErrUnavailable, c.Socket)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer func() { _ = conn.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	// A frozen or wedged server accepts (the kernel queues the
	// connection) but never answers the hello.
	_ = conn.SetDeadline(time.Now().Add(helloTimeout))
	if err := clientHello(conn, c.Token); err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	head, _ := json.Marshal(r)
	if err := writeFrame(conn, kindRequest, head); err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// The server answers within the command's timeout plus the kill grace;
	// past that the server itself is stuck.
	_ = conn.SetDeadline(time.Now().Add(timeout + sandbox.KillGrace + 30*time.Second))
	if stdin != nil {
		go func() {
			buf := make([]byte, maxFrame)
			for {
				n, err := stdin.Read(buf)
				if n > 0 && writeFrame(conn, kindStdin, buf[:n]) != nil {
					return
				}
				if err != nil {
					_ = writeFrame(conn, kindStdin, nil)
					return
				}
			}
		}()
	}
	stdout, stderr := capbuf.New(maxOut), capbuf.New(maxOut)
	buf := make([]byte, 0, maxFrame)
	for {
		kind, p, err := readFrame(conn, buf)
		if err != nil {
			if ctx.Err() != nil {
				return sandbox.ExecResult{}, ctx.Err()
			}
			return sandbox.ExecResult{}, fmt.Errorf("channel: answer: %w", err)
		}
		switch kind {
		case kindStdout:
			_, _ = stdout.Write(p)
		case kindStderr:
			_, _ = stderr.Write(p)
		case kindExit:
			var x Exit
			if err := json.Unmarshal(p, &x); err != nil {
				return sandbox.ExecResult{}, fmt.Errorf("%w: exit: %v", ErrFraming, err)
			}
			if x.Error == refused {
				return sandbox.ExecResult{}, fmt.Errorf("%w: %w", ErrUnavailable, ErrRefused)
			}
			if x.Error != "" {
				return sandbox.ExecResult{}, fmt.Errorf("channel: %s", x.Error)
			}
			if exit != nil {
				*exit = x
			}
			return sandbox.ExecResult{
				ExitCode: x.Code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
				Truncated: x.Truncated || stdout.Truncated() || stderr.Truncated(), TimedOut: x.TimedOut,
			}, nil
		default:
			return sandbox.ExecResult{}, fmt.Errorf("%w: kind %q from the server", ErrFraming, kind)
		}
	}
}
