package codeops

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
)

// ReadRequest decodes a helper's argument (guilds-code, guilds-script-run):
// the base64 request itself, or
// "@<path>" naming a request file under /run/guilds/requests/, which is
// deleted once read, whatever it held.
func ReadRequest(arg string, maxFile int64) (codeproto.Request, error) {
	p, isFile := strings.CutPrefix(arg, "@")
	if !isFile {
		return codeproto.DecodeRequest([]byte(arg))
	}
	fsPath, err := requestFile(p)
	if err != nil {
		return codeproto.Request{}, err
	}
	raw, err := readSmall(fsPath, maxFile)
	_ = os.Remove(fsPath)
	if err != nil {
		return codeproto.Request{}, fmt.Errorf("request file %s: %w", p, err)
	}
	return codeproto.DecodeRequest(raw)
}

// requestFile maps a request file's path to the filesystem, refusing
// anything but a file directly in the request folder. The path is the one
// the orchestrator wrote, /run/guilds/requests/<name>, or under the local
// development driver that folder's place on the host.
func requestFile(p string) (string, error) {
	clean := filepath.Clean(p)
	hostDir := filepath.Join(RunDirFS(), "requests")
	name, ok := strings.CutPrefix(clean, codeproto.RequestDir+"/")
	if !ok {
		name, ok = strings.CutPrefix(clean, hostDir+"/")
	}
	if !ok || name == "" || strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("request file %q is not a file directly under %s", p, codeproto.RequestDir)
	}
	return filepath.Join(hostDir, name), nil
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
