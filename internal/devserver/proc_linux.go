package devserver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listensOn reports whether process pid holds the listening TCP socket on
// the port: /proc/net/tcp names the socket's inode, /proc/PID/fd its owner.
func listensOn(pid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(table, port, inodes); err != nil && !os.IsNotExist(err) {
			return false, fmt.Errorf("check who listens on port %d: %w", port, err)
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, nil // exited, or exiting: the caller sees it on its next turn
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return true, nil
		}
	}
	return false, nil
}

// listeningInodes adds the inodes of the sockets listening on port in one
// /proc/net table ("sl local_address rem_address st … inode").
func listeningInodes(table string, port int, into map[string]bool) error {
	f, err := os.Open(table) //nolint:gosec // G304: one of the fixed /proc/net tables
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, hexPort, _ := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); err != nil || int(p) != port {
			continue
		}
		into[fields[9]] = true
	}
	return sc.Err()
}
