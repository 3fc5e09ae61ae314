package docker

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// sharedFolder makes dir a mount of its own whose later submounts
// propagate to the sandboxes' slave copies, and takes off whatever an
// earlier worker left mounted under it. bound says it mounted dir on
// itself (unshareFolder undoes that).
func sharedFolder(dir string) (bound bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	points, err := mountsUnder(dir)
	if err != nil {
		return false, err
	}
	if !slices.Contains(points, dir) {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
			return false, fmt.Errorf("bind %s: %w", dir, err)
		}
		bound = true
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		return bound, fmt.Errorf("share %s: %w", dir, err)
	}
	// Deepest first, then the folders they were on.
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if p != dir {
			if err := detach(p); err != nil {
				return bound, err
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return bound, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "slot-") {
			if err := os.RemoveAll(dir + "/" + e.Name()); err != nil {
				return bound, err
			}
		}
	}
	return bound, nil
}

// unshareFolder takes off the mount sharedFolder put on dir.
func unshareFolder(dir string) error {
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// mountsUnder lists the mount points at or below dir.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// bindInto mounts a copy of src at point, with no set-user-id files or
// devices, read-only when ro. The copy is made detached and gets its
// flags before it is attached, so the copies the kernel propagates into
// a sandbox carry them too.
func bindInto(src, point string, ro bool) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer func() { _ = unix.Close(fd) }()
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", src, err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, point, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount onto %s: %w", point, err)
	}
	return nil
}

// detach takes every mount at point off, lazily (a sandbox's process may
// still be on it); a point with nothing mounted is not an error.
func detach(point string) error {
	for {
		err := unix.Unmount(point, unix.MNT_DETACH)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unmount %s: %w", point, err)
		}
	}
}
