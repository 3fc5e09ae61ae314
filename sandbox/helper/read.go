package helper

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SandboxRootEnv is set by the local development driver to the host
// directory that stands for the sandbox's root filesystem.
const SandboxRootEnv = "GUILDS_SANDBOX_ROOT"

// RequestDirFS is the directory standing for RequestDir on the filesystem
// the helper sees: RequestDir itself in a container, under the local
// driver's root on a host.
func RequestDirFS() string {
	if root := os.Getenv(SandboxRootEnv); root != "" {
		return filepath.Join(root, RequestDir)
	}
	return RequestDir
}

// ReadOptions bound what a helper reads.
type ReadOptions struct {
	// MaxFile bounds a request file, in bytes.
	MaxFile int64
	// Dir is the directory standing for RequestDir; "" = RequestDirFS().
	Dir string
}

// Read decodes a helper's request argument: the base64 request itself, or
// "@<path>" naming a request file directly under RequestDir (by its sandbox
// path, or its place on the filesystem the helper sees), which is deleted
// once read, whatever it held.
func Read[Req any](arg string, o ReadOptions) (Req, error) {
	var none Req
	p, isFile := strings.CutPrefix(arg, "@")
	if !isFile {
		r, err := Decode[Req]([]byte(arg))
		if err != nil {
			return none, fmt.Errorf("request: %w", err)
		}
		return r, nil
	}
	dir := o.Dir
	if dir == "" {
		dir = RequestDirFS()
	}
	fsPath, err := requestFile(p, dir)
	if err != nil {
		return none, err
	}
	raw, err := readSmall(fsPath, o.MaxFile)
	_ = os.Remove(fsPath) //nolint:gosec // G703: checked to be a file directly under the request folder
	if err != nil {
		return none, fmt.Errorf("request file %s: %w", p, err)
	}
	r, err := Decode[Req](raw)
	if err != nil {
		return none, fmt.Errorf("request file %s: %w", p, err)
	}
	return r, nil
}

// requestFile maps a request file's path to the filesystem, refusing
// anything but a file directly in the request folder.
func requestFile(p, dir string) (string, error) {
	clean := filepath.Clean(p)
	name, ok := strings.CutPrefix(clean, RequestDir+"/")
	if !ok {
		name, ok = strings.CutPrefix(clean, filepath.Clean(dir)+"/")
	}
	if !ok || name == "" || strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("request file %q is not a file directly under %s", p, RequestDir)
	}
	return filepath.Join(dir, name), nil
}

func readSmall(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p) //nolint:gosec // G304: a request file under the request folder
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%d bytes, over the %d byte limit", st.Size(), limit)
	}
	buf := make([]byte, st.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// Reply prints resp as the helper's answer: base64 JSON and a newline.
func Reply(w io.Writer, resp any) error {
	out, err := Encode(resp)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	_, err = fmt.Fprintln(w, out)
	return err
}

// Serve is a helper's main for one request: read arg, answer it with serve,
// reply. It returns the exit code: 2 for a request it cannot read, 1 when
// the answer cannot be written, 0 otherwise; its errors go to stderr,
// prefixed with name.
func Serve[Req, Resp any](name, arg string, o ReadOptions, stdout, stderr io.Writer, serve func(Req) Resp) int {
	req, err := Read[Req](arg, o)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if err := Reply(stdout, serve(req)); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
