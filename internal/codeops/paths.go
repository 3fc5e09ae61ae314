package codeops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds symbolic link resolution, as the kernel does (ELOOP).
const maxLinkHops = 40

// Resolve turns a path argument into the file it names: a relative path
// resolves against the run's working directory, /home/agent/... maps to the
// home, and every symbolic link on the way is followed (a missing tail is
// kept as written, so a file about to be created resolves too). A path that
// ends up outside /home/agent is refused. display is the /home/agent form.
func (e *Env) Resolve(p string) (fsPath, display string, err error) {
	if strings.TrimSpace(p) == "" {
		return "", "", errors.New("is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", "", errors.New("contains a NUL byte")
	}
	// ~ is the home, as in the shell.
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = DisplayHome + p[1:]
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = e.FromDisplay(filepath.Clean(p))
	} else {
		cwd, _ := e.Cwd()
		abs = filepath.Join(cwd, p)
	}
	real, err := resolveLinks(abs)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", p, err)
	}
	if !e.inside(real) {
		shown := e.Display(real)
		if shown == p || e.Display(abs) == shown {
			return "", "", fmt.Errorf("%s is outside %s", p, DisplayHome)
		}
		return "", "", fmt.Errorf("%s resolves to %s, outside %s", p, shown, DisplayHome)
	}
	return real, e.Display(real), nil
}

func (e *Env) inside(fsPath string) bool {
	return fsPath == e.Home || strings.HasPrefix(fsPath, e.Home+string(filepath.Separator))
}

// resolveLinks follows every link in an absolute, clean path. Components
// from the first one that does not exist are appended as they are.
func resolveLinks(p string) (string, error) {
	hops := 0
	done := string(filepath.Separator)
	rest := strings.TrimPrefix(p, done)
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, string(filepath.Separator))
		next := filepath.Join(done, name)
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(next, rest), nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(done, target)
		}
		// The link's target replaces what is resolved so far; a ".." in it
		// is taken lexically from the link's own folder, as the kernel does
		// once that folder is itself resolved.
		target = filepath.Clean(target)
		done = string(filepath.Separator)
		rest = strings.TrimPrefix(filepath.Join(target, rest), done)
	}
	return done, nil
}
