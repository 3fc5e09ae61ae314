package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/internal/capbuf"
)

// wrapper starts every exec. It makes sure the command leads its own
// process group (runc already makes an exec a session leader; setsid covers
// engines that do not), announces that group on the first line of stderr,
// and then becomes the command. The engine's exec API cannot signal an
// exec, so the driver needs the group id to kill it from a second exec.
const wrapper = `read -r _ _ _ _ pg _ </proc/$$/stat 2>/dev/null
if [ "$pg" != "$$" ] && command -v setsid >/dev/null 2>&1; then
  printf '%s\n' "$$" >&2; exec setsid "$@"
fi
printf '%s\n' "$$" >&2; exec "$@"`

// killer stops a process group: SIGTERM, then SIGKILL once the grace
// (in tenths of a second) is spent with a live (non-zombie) member left.
const killer = `pg=$1; n=$2
kill -s TERM -"$pg" 2>/dev/null || exit 0
i=0
while [ "$i" -lt "$n" ]; do
  alive=
  for f in /proc/[0-9]*/stat; do
    read -r _ _ st _ g _ 2>/dev/null <"$f" || continue
    if [ "$g" = "$pg" ] && [ "$st" != Z ]; then alive=1; break; fi
  done
  [ -z "$alive" ] && exit 0
  sleep 0.1; i=$((i+1))
done
kill -s KILL -"$pg" 2>/dev/null; exit 0`

// Exec runs req.Cmd through the wrapper and, at the timeout, kills its
// process group from a second exec.
func (d *Driver) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	req, err := req.Normalize()
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	return d.exec(ctx, id, req.User, req)
}

// exec runs req (already normalised) as user ("" = the sandbox's user).
func (d *Driver) exec(ctx context.Context, id, user string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if user == "" {
		if res, ran, err := d.execChannel(ctx, id, req); ran {
			return res, err
		}
	}
	cmd := append([]string{"/bin/sh", "-c", wrapper, "guilds-exec"}, req.Cmd...)
	created, err := d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		User:         user,
		AttachStdin:  req.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          sandbox.EnvList(req.Env),
		WorkingDir:   req.Dir,
		Cmd:          cmd,
	})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return sandbox.ExecResult{}, fmt.Errorf("%w: %s", sandbox.ErrNotFound, id)
		}
		if isNotRunning(err) {
			return sandbox.ExecResult{}, fmt.Errorf("%w: %s: %v", sandbox.ErrNotRunning, id, err)
		}
		return sandbox.ExecResult{}, fmt.Errorf("sandbox/docker: exec: %w", err)
	}
	hj, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("sandbox/docker: exec attach: %w", err)
	}
	defer hj.Close()

	if req.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, req.Stdin)
			_ = hj.CloseWrite()
		}()
	}
	stdout, stderr := capbuf.New(req.MaxOutput), capbuf.New(req.MaxOutput)
	pg := &pgidWriter{next: stderr, known: make(chan struct{})}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, pg, hj.Reader)
		copied <- err
	}()

	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	var res sandbox.ExecResult
	select {
	case err = <-copied:
	case <-timer.C:
		res.TimedOut = true
		d.stopGroup(context.WithoutCancel(ctx), id, user, pg)
		select {
		case err = <-copied:
		case <-time.After(5 * time.Second):
			// A process that escaped the group still holds the stream.
			hj.Close()
			err = <-copied
		}
	case <-ctx.Done():
		d.stopGroup(context.WithoutCancel(ctx), id, user, pg)
		return sandbox.ExecResult{}, ctx.Err()
	}
	if err != nil && !res.TimedOut {
		return sandbox.ExecResult{}, fmt.Errorf("sandbox/docker: exec stream: %w", err)
	}

	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	if res.TimedOut {
		res.ExitCode = sandbox.ExitTimeout
		return res, nil
	}
	code, err := d.exitCode(ctx, created.ID)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	res.ExitCode = code
	return res, nil
}

// isNotRunning recognises the engine's answer to an exec into a stopped
// container: Docker says 409 "is not running", Podman 500 "container state
// improper".
func isNotRunning(err error) bool {
	msg := err.Error()
	return cerrdefs.IsConflict(err) || strings.Contains(msg, "state improper") || strings.Contains(msg, "is not running")
}

// exitCode reads the exec's exit code. The stream can end a moment before
// the engine records the exit, so a still-running exec is asked again.
func (d *Driver) exitCode(ctx context.Context, execID string) (int, error) {
	for i := 0; ; i++ {
		info, err := d.cli.ContainerExecInspect(ctx, execID)
		if err != nil {
			return 0, fmt.Errorf("sandbox/docker: exec inspect: %w", err)
		}
		if !info.Running || i >= 100 {
			return info.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopGroup runs the killer against the exec's process group, as its user.
func (d *Driver) stopGroup(ctx context.Context, id, user string, pg *pgidWriter) {
	select {
	case <-pg.known:
	case <-time.After(2 * time.Second):
		d.log.WarnContext(ctx, "sandbox exec timed out before announcing its process group", "sandbox", id)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sandbox.KillGrace+10*time.Second)
	defer cancel()
	tenths := strconv.Itoa(int(sandbox.KillGrace / (100 * time.Millisecond)))
	// As the exec's own user: another uid cannot signal its processes.
	_, err := d.exec(ctx, id, user, sandbox.ExecRequest{
		Cmd:       []string{"/bin/sh", "-c", killer, "guilds-kill", strconv.Itoa(pg.pgid), tenths},
		Dir:       "/",
		Timeout:   sandbox.KillGrace + 5*time.Second,
		MaxOutput: 4096,
	})
	if err != nil {
		d.log.WarnContext(ctx, "sandbox exec could not be killed", "sandbox", id, "err", err)
	}
}

// pgidWriter takes the wrapper's first stderr line (the process group id)
// off the stream and passes the rest on.
type pgidWriter struct {
	next  io.Writer
	known chan struct{}
	once  sync.Once
	line  []byte
	done  bool
	pgid  int
}

func (w *pgidWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !w.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 && len(w.line)+len(p) < 32 {
			w.line = append(w.line, p...)
			return n, nil
		}
		head := slices.Concat(w.line, p)
		if i >= 0 {
			w.line = append(w.line, p[:i]...)
			p = p[i+1:]
		}
		w.done = true
		if v, err := strconv.Atoi(string(w.line)); err == nil && v > 1 && i >= 0 {
			w.pgid = v
			w.once.Do(func() { close(w.known) })
		} else {
			p = head // not the announcement: pass everything on
		}
	}
	if len(p) == 0 {
		return n, nil
	}
	_, err := w.next.Write(p)
	return n, err
}
