package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/guilds/guilds/sandbox"
)

// openFS opens the sandbox's filesystem as an os.Root, so no path (or link
// inside the sandbox) can reach outside it.
func (d *Driver) openFS(id, p string) (*os.Root, string, error) {
	if err := sandbox.CheckPath(p); err != nil {
		return nil, "", err
	}
	if p == "/" {
		return nil, "", fmt.Errorf("%w: path / is not a file", sandbox.ErrInvalid)
	}
	dir, m, err := d.load(id)
	if err != nil {
		return nil, "", err
	}
	base, rel := d.place(dir, m, p)
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", fmt.Errorf("sandbox/local: %w", err)
	}
	return r, rel, nil
}

// CopyTo writes a temporary file next to the target and renames it over.
func (d *Driver) CopyTo(ctx context.Context, id, p string, content []byte, mode fs.FileMode) error {
	if len(content) > sandbox.MaxFileSize {
		return sandbox.ErrTooLarge
	}
	r, rel, err := d.openFS(id, p)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	if err := r.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return fmt.Errorf("sandbox/local: copy to %s: %w", p, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := rel + ".guilds-tmp." + hex.EncodeToString(b[:])
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox/local: copy to %s: %w", p, err)
	}
	_, werr := f.Write(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, r.Chmod(tmp, mode.Perm())); err != nil {
		_ = r.Remove(tmp)
		return fmt.Errorf("sandbox/local: copy to %s: %w", p, err)
	}
	if err := r.Rename(tmp, rel); err != nil {
		_ = r.Remove(tmp)
		return fmt.Errorf("sandbox/local: copy to %s: %w", p, err)
	}
	return nil
}

// CopyFrom reads a regular file.
func (d *Driver) CopyFrom(ctx context.Context, id, p string) (sandbox.File, error) {
	r, rel, err := d.openFS(id, p)
	if err != nil {
		return sandbox.File{}, err
	}
	defer func() { _ = r.Close() }()
	f, err := r.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return sandbox.File{}, fmt.Errorf("%w: %s", sandbox.ErrNotFound, p)
	}
	if err != nil {
		return sandbox.File{}, fmt.Errorf("sandbox/local: copy from %s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return sandbox.File{}, fmt.Errorf("sandbox/local: copy from %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return sandbox.File{}, fmt.Errorf("%w: %s is not a regular file", sandbox.ErrInvalid, p)
	}
	content, err := io.ReadAll(io.LimitReader(f, sandbox.MaxFileSize+1))
	if err != nil {
		return sandbox.File{}, fmt.Errorf("sandbox/local: copy from %s: %w", p, err)
	}
	if len(content) > sandbox.MaxFileSize {
		return sandbox.File{}, sandbox.ErrTooLarge
	}
	return sandbox.File{Content: content, Mode: st.Mode().Perm()}, nil
}
