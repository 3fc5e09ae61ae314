package docker

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// readCapped reads r whole, or fails past max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return b, nil
}

// fillNewHome gives a home volume that was never used (an empty folder
// root owns) what the engine would have copied into it at its first
// mount: the image's home, owners and modes included. A home already in
// use is left as it is. archive is the engine's tar of the image's home,
// whose first component is the folder's own name.
func fillNewHome(folder string, archive []byte) error {
	fi, err := os.Stat(folder)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 || len(entries) > 0 {
		return nil
	}
	root, err := os.OpenRoot(folder)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := extract(root, tr, h); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

// extract writes one entry of the image's home under root. Only folders,
// files and symbolic links are kept; os.Root keeps every path inside.
func extract(root *os.Root, r io.Reader, h *tar.Header) error {
	name := path.Clean(h.Name)
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	} else {
		name = "." // the home folder itself
	}
	mode := fs.FileMode(h.Mode).Perm() //nolint:gosec // G115: tar modes are small
	if h.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if name != "." {
			if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	case tar.TypeReg:
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil { //nolint:gosec // G110: the archive was read whole under a cap (readCapped)
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := root.Symlink(h.Linkname, name); err != nil {
			return err
		}
		return root.Lchown(name, h.Uid, h.Gid)
	default:
		return nil
	}
	if err := root.Lchown(name, h.Uid, h.Gid); err != nil {
		return err
	}
	return root.Chmod(name, mode)
}
