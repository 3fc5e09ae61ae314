package docker

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// The file API goes through exec rather than the engine's archive
// endpoints: those see neither tmpfs mounts (where /run/guilds lives) nor
// a read-only root, and they would bypass the sandbox user. Content travels
// on stdin and stdout only, never in a command line.

// writeFile writes stdin to a temporary file beside the target, sets its
// mode, then renames it over the target.
const writeFile = `set -e
mkdir -p -- "$(dirname -- "$1")"
t="$1.guilds-tmp.$$"
trap 'rm -f -- "$t"' EXIT
cat >"$t"
chmod "$2" "$t"
mv -f -- "$t" "$1"
trap - EXIT`

// readFile prints "<octal mode> <size>" on one line, then the content.
// Exit 3: no such file; 4: not a regular file; 5: too large.
const readFile = `[ -e "$1" ] || exit 3
[ -f "$1" ] || exit 4
s=$(stat -c '%a %s' -- "$1") || exit 1
[ "${s#* }" -le "$2" ] || exit 5
printf '%s\n' "$s"
exec cat -- "$1"`

const fileTimeout = time.Minute

// CopyTo writes content to path with mode inside the sandbox.
func (d *Driver) CopyTo(ctx context.Context, id, path string, content []byte, mode fs.FileMode) error {
	if err := checkFilePath(path); err != nil {
		return err
	}
	if len(content) > sandbox.MaxFileSize {
		return sandbox.ErrTooLarge
	}
	res, err := d.exec(ctx, id, "", sandbox.ExecRequest{
		Cmd:       []string{"/bin/sh", "-c", writeFile, "guilds-write", path, fmt.Sprintf("%o", mode.Perm())},
		Dir:       "/",
		Stdin:     bytes.NewReader(content),
		Timeout:   fileTimeout,
		MaxOutput: 4096,
	})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("sandbox/docker: copy to %s: exit %d: %s", path, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// CopyFrom reads a regular file from the sandbox.
func (d *Driver) CopyFrom(ctx context.Context, id, path string) (sandbox.File, error) {
	if err := checkFilePath(path); err != nil {
		return sandbox.File{}, err
	}
	res, err := d.exec(ctx, id, "", sandbox.ExecRequest{
		Cmd:       []string{"/bin/sh", "-c", readFile, "guilds-read", path, strconv.Itoa(sandbox.MaxFileSize)},
		Dir:       "/",
		Timeout:   fileTimeout,
		MaxOutput: sandbox.MaxFileSize + 64,
	})
	if err != nil {
		return sandbox.File{}, err
	}
	switch res.ExitCode {
	case 0:
	case 3:
		return sandbox.File{}, fmt.Errorf("%w: %s", sandbox.ErrNotFound, path)
	case 4:
		return sandbox.File{}, fmt.Errorf("%w: %s is not a regular file", sandbox.ErrInvalid, path)
	case 5:
		return sandbox.File{}, sandbox.ErrTooLarge
	default:
		return sandbox.File{}, fmt.Errorf("sandbox/docker: copy from %s: exit %d: %s", path, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	header, content, ok := bytes.Cut(res.Stdout, []byte("\n"))
	modeText, sizeText, ok2 := strings.Cut(string(header), " ")
	m, err1 := strconv.ParseUint(modeText, 8, 32)
	size, err2 := strconv.Atoi(sizeText)
	if !ok || !ok2 || err1 != nil || err2 != nil || size != len(content) || res.Truncated {
		return sandbox.File{}, fmt.Errorf("sandbox/docker: copy from %s: unexpected reply", path)
	}
	return sandbox.File{Content: content, Mode: fs.FileMode(m).Perm()}, nil
}

func checkFilePath(p string) error {
	if err := sandbox.CheckPath(p); err != nil {
		return err
	}
	if p == "/" {
		return fmt.Errorf("%w: path / is not a file", sandbox.ErrInvalid)
	}
	return nil
}
