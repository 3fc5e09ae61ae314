package codegraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// DisplayHome is the workspace home as the agent sees it.
const DisplayHome = "/home/agent"

// Env is where a call runs. Only Home and Cwd are required; the helper
// passes its own path confinement in Resolve and Rel.
type Env struct {
	Home     string // the filesystem folder standing for /home/agent, links resolved
	Cwd      string // the working directory's filesystem path
	MaxBytes int    // cap on the result text; 0 = 8192

	// Resolve maps a path argument to a filesystem path inside Home (links
	// followed), or says why not. nil: a lexical resolution against Cwd.
	Resolve func(p string) (string, error)
	// Rel is how results name a filesystem path. nil: relative to Cwd when
	// under it, else its /home/agent form.
	Rel func(fsPath string) string
}

// Result is a query's answer: the text the model sees, and the metadata
// the call records (repository, hits, ...).
type Result struct {
	Text string
	Meta map[string]any
}

func errorf(format string, a ...any) Result {
	return Result{Text: "ERROR: " + fmt.Sprintf(format, a...)}
}

func (e *Env) maxBytes() int {
	if e.MaxBytes > 0 {
		return e.MaxBytes
	}
	return 8192
}

func (e *Env) reposDir() string { return filepath.Join(e.Home, "repos") }

// cacheDir is where the graph of repository name is stored.
func (e *Env) cacheDir(name string) string { return filepath.Join(e.Home, ".cache", "graft", name) }

func (e *Env) resolve(p string) (string, error) {
	if e.Resolve != nil {
		return e.Resolve(p)
	}
	if strings.TrimSpace(p) == "" {
		return "", errors.New("is empty")
	}
	var abs string
	switch {
	case p == DisplayHome:
		abs = e.Home
	case strings.HasPrefix(p, DisplayHome+"/"):
		abs = filepath.Join(e.Home, strings.TrimPrefix(p, DisplayHome+"/"))
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
	default:
		abs = filepath.Join(e.Cwd, p)
	}
	if abs != e.Home && !strings.HasPrefix(abs, e.Home+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside %s", p, DisplayHome)
	}
	return abs, nil
}

func (e *Env) rel(fsPath string) string {
	if e.Rel != nil {
		return e.Rel(fsPath)
	}
	if fsPath == e.Cwd {
		return "."
	}
	if rest, ok := strings.CutPrefix(fsPath, e.Cwd+string(filepath.Separator)); ok {
		return filepath.ToSlash(rest)
	}
	if fsPath == e.Home {
		return DisplayHome
	}
	if rest, ok := strings.CutPrefix(fsPath, e.Home+string(filepath.Separator)); ok {
		return DisplayHome + "/" + filepath.ToSlash(rest)
	}
	return fsPath
}

// repoOf names the repository holding fsPath and the path's place in it
// ("" for the root), ok false when it is in none.
func (e *Env) repoOf(fsPath string) (name, rel string, ok bool) {
	rest, found := strings.CutPrefix(fsPath, e.reposDir()+string(filepath.Separator))
	if !found || rest == "" {
		return "", "", false
	}
	name, rel, _ = strings.Cut(filepath.ToSlash(rest), "/")
	return name, rel, true
}

func (e *Env) repoNames() []string {
	entries, _ := os.ReadDir(e.reposDir())
	var names []string
	for _, en := range entries {
		if en.IsDir() && !strings.HasPrefix(en.Name(), ".") {
			names = append(names, en.Name())
		}
	}
	sort.Strings(names)
	return names
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// target is the repository a call addresses and the part of it (a folder
// or file, slash-separated, "" the whole) the call narrows to.
type target struct {
	name  string
	root  string
	scope string
	fs    string // the scope's filesystem path
}

// byName addresses repository name (code_map's repo).
func (e *Env) byName(field, name string) (target, error) {
	if name == "" {
		return e.byPath(field, "")
	}
	if !repoName.MatchString(name) || name == "." || name == ".." {
		return target{}, fmt.Errorf("%s: %q is not a repository name (a folder under %s/repos)", field, name, DisplayHome)
	}
	root := filepath.Join(e.reposDir(), name)
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return target{}, fmt.Errorf("%s: no repository %q under %s/repos%s", field, name, DisplayHome, e.have())
	}
	if err := e.confined(root); err != nil {
		return target{}, fmt.Errorf("%s: %v", field, err)
	}
	return target{name: name, root: root, fs: root}, nil
}

func (e *Env) have() string {
	names := e.repoNames()
	if len(names) == 0 {
		return " (there is none)"
	}
	return " (there: " + strings.Join(names, ", ") + ")"
}

// byPath addresses the repository holding p (field's value), else the one
// holding the working directory, else the only one there is.
func (e *Env) byPath(field, p string) (target, error) {
	if p != "" {
		fsPath, err := e.resolve(p)
		if err != nil {
			return target{}, fmt.Errorf("%s: %v", field, err)
		}
		if _, err := os.Stat(fsPath); err != nil {
			return target{}, fmt.Errorf("%s: %s does not exist", field, p)
		}
		name, rel, ok := e.repoOf(fsPath)
		if !ok {
			return target{}, fmt.Errorf("%s: %s is not inside a repository under %s/repos%s", field, p, DisplayHome, e.have())
		}
		t := target{name: name, root: filepath.Join(e.reposDir(), name), scope: rel, fs: fsPath}
		return t, e.confinedTarget(field, t)
	}
	if name, rel, ok := e.repoOf(e.Cwd); ok {
		root := filepath.Join(e.reposDir(), name)
		if _, err := os.Stat(root); err == nil {
			t := target{name: name, root: root, scope: rel, fs: e.Cwd}
			return t, e.confinedTarget(field, t)
		}
	}
	names := e.repoNames()
	switch len(names) {
	case 1:
		root := filepath.Join(e.reposDir(), names[0])
		t := target{name: names[0], root: root, fs: root}
		return t, e.confinedTarget(field, t)
	case 0:
		return target{}, fmt.Errorf("%s: there is no repository under %s/repos (clone one there first)", field, DisplayHome)
	}
	return target{}, fmt.Errorf("%s: the working directory is in no repository and %s/repos holds several (%s): name one with %s",
		field, DisplayHome, strings.Join(names, ", "), field)
}

// confined refuses a repository folder that is a link leading out of
// the workspace home.
func (e *Env) confined(root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if real != e.Home && !strings.HasPrefix(real, e.Home+string(filepath.Separator)) {
		return fmt.Errorf("%s/repos/%s leads outside %s", DisplayHome, filepath.Base(root), DisplayHome)
	}
	return nil
}

func (e *Env) confinedTarget(field string, t target) error {
	if err := e.confined(t.root); err != nil {
		return fmt.Errorf("%s: %v", field, err)
	}
	return nil
}

// inScope reports whether a repository path is the scope or inside it.
func inScope(scope, p string) bool {
	return scope == "" || p == scope || strings.HasPrefix(p, scope+"/")
}

// open refreshes and returns the target's graph.
func (e *Env) open(ctx context.Context, t target) (*Graph, error) {
	return Open(ctx, t.root, e.cacheDir(t.name))
}

// show names a repository path for the model.
func (e *Env) show(g *Graph, rel string) string {
	if rel == "" {
		return e.rel(g.Root)
	}
	return e.rel(filepath.Join(g.Root, filepath.FromSlash(rel)))
}
