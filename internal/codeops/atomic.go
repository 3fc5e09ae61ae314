package codeops

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with content: a temporary file in the same
// folder, written, synced, given mode and renamed over path, so a reader
// sees the old file or the new one, never a part.
func writeFileAtomic(path string, content []byte, mode os.FileMode) error {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".guilds-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name) //nolint:gosec // G703: the temporary file made just above
		}
	}()
	if _, err := tmp.Write(content); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil { //nolint:gosec // G703: callers pass confined or the helper's own paths
		return err
	}
	ok = true
	return nil
}
