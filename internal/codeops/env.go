// Package codeops holds the operations of the code tools as guilds-code runs
// them inside an agent's sandbox: path confinement, shell, background jobs,
// file reads and edits, and text and syntax search.
//
// Every operation sees the workspace through an Env. Inside a container the
// workspace is /home/agent itself; the local development driver names the
// directory that stands for it (codeproto.HomeEnv), and results still show
// /home/agent paths.
//
// What the helper keeps between calls (each call is a new process):
//
//	/home/agent/.runs/<run id>/cwd            the run's working directory
//	/home/agent/.runs/<run id>/<call id>.log  a shell call's full output
//	/run/guilds/jobs/.next, .lock             the next background id (b1, b2, …)
//	/run/guilds/jobs/b<n>/job.json            a background command, as started
//	/run/guilds/jobs/b<n>/started.json        its supervisor's pid and its process group
//	/run/guilds/jobs/b<n>/end.json            its exit code, once it ended
//	/run/guilds/jobs/b<n>/stopped             present when shell_status stopped it
//
// /run/guilds is a tmpfs, so the background ids last as long as the
// container, as the spec says.
package codeops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox/helper"
)

// Paths as the agent sees them.
const (
	DisplayHome   = "/home/agent"
	DisplayRunDir = "/run/guilds"
	// RunsDir holds one folder per run (cwd, shell logs) under the home.
	RunsDir = ".runs"
	// KeepRuns is how many run folders RunsDir keeps.
	KeepRuns = 20
)

// SandboxRootEnv is set by the local development driver to the directory
// that stands for the sandbox's root filesystem.
const SandboxRootEnv = helper.SandboxRootEnv

// Env is one helper invocation's view of the workspace.
type Env struct {
	// Home is the filesystem directory standing for /home/agent, links
	// resolved.
	Home string
	// RunDir is the filesystem directory standing for /run/guilds (request
	// files, background job state: it lives as long as the container).
	RunDir string
	// Req is the call being served.
	Req codeproto.Request
	// BaseEnv is the helper's own PATH and LANG, the only parts of its
	// environment a shell command inherits.
	BaseEnv map[string]string
}

// NewEnv builds the Env of a request from the helper's environment.
func NewEnv(req codeproto.Request) (*Env, error) {
	home, runDir := locations()
	env := map[string]string{"PATH": os.Getenv("PATH"), "LANG": os.Getenv("LANG")}
	return newEnv(home, runDir, req, env)
}

// RunDirFS is the filesystem directory standing for /run/guilds.
func RunDirFS() string {
	_, runDir := locations()
	return runDir
}

// ReadRequest decodes the argument of guilds-code or guilds-script-run
// through the helper lane, its request files read from the run directory
// as this helper sees it; maxFile bounds a request file.
func ReadRequest(maxFile int64) helper.ReadOptions {
	return helper.ReadOptions{MaxFile: maxFile, Dir: filepath.Join(RunDirFS(), "requests")}
}

// locations finds the home and the run directory on the filesystem the
// helper sees: the real ones in a container, else the local driver's
// (SandboxRootEnv), else the directory codeproto.HomeEnv names, with the
// run directory beside it when it ends in /home/agent and inside it
// otherwise.
func locations() (home, runDir string) {
	home, runDir = DisplayHome, DisplayRunDir
	root := os.Getenv(SandboxRootEnv)
	if root != "" {
		home, runDir = filepath.Join(root, DisplayHome), filepath.Join(root, DisplayRunDir)
	}
	if h := os.Getenv(codeproto.HomeEnv); h != "" {
		home = h
		if root == "" {
			runDir = filepath.Join(h, RunsDir, ".run")
			if prefix, ok := strings.CutSuffix(filepath.Clean(h), DisplayHome); ok && prefix != "" {
				runDir = filepath.Join(prefix, DisplayRunDir)
			}
		}
	}
	return home, runDir
}

func newEnv(home, runDir string, req codeproto.Request, base map[string]string) (*Env, error) {
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("codeops: home %s: %w", home, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("codeops: home %s: %w", home, err)
	}
	if err := checkName("run_id", req.RunID, true); err != nil {
		return nil, err
	}
	if err := checkName("call_id", req.CallID, true); err != nil {
		return nil, err
	}
	if req.MaxBytes <= 0 {
		req.MaxBytes = codeproto.DefaultResultMaxBytes
	}
	return &Env{Home: real, RunDir: runDir, Req: req, BaseEnv: base}, nil
}

// NewTestEnv is an Env over home (a temporary directory in tests and
// benchmarks), with the helper's PATH.
func NewTestEnv(home string, req codeproto.Request) (*Env, error) {
	return newEnv(home, filepath.Join(home, RunsDir, ".run"), req, map[string]string{"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8"})
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// checkName refuses a run or call id that could not name a folder or file.
func checkName(field, v string, optional bool) error {
	if v == "" && optional {
		return nil
	}
	if !safeName.MatchString(v) || strings.Contains(v, "..") {
		return fmt.Errorf("%s %q is not a plain name (letters, digits, '.', '_', '-')", field, v)
	}
	return nil
}

// MaxBytes is the cap on this call's result text.
func (e *Env) MaxBytes() int { return e.Req.MaxBytes }

// RunFolder is the filesystem folder of this run under .runs/, or an error
// when the request names no run.
func (e *Env) RunFolder() (string, error) {
	if e.Req.RunID == "" {
		return "", errors.New("run_id is required")
	}
	return filepath.Join(e.Home, RunsDir, e.Req.RunID), nil
}

// cwdFile is where the run's working directory is kept.
func (e *Env) cwdFile() string {
	if e.Req.RunID == "" {
		return ""
	}
	return filepath.Join(e.Home, RunsDir, e.Req.RunID, "cwd")
}

// Cwd returns the run's working directory: its filesystem path and its
// display form. It starts at /home/agent; a recorded directory that no
// longer exists falls back to /home/agent too.
func (e *Env) Cwd() (fsPath, display string) {
	if f := e.cwdFile(); f != "" {
		if raw, err := os.ReadFile(f); err == nil { //nolint:gosec // G304: the run's own cwd file
			d := strings.TrimSpace(string(raw))
			fsp := e.FromDisplay(d)
			//nolint:gosec // G703: only checked to be a folder; a run may stand anywhere, as a shell can
			if st, err := os.Stat(fsp); err == nil && st.IsDir() && filepath.IsAbs(d) {
				return fsp, d
			}
		}
	}
	return e.Home, DisplayHome
}

// SetCwd records the run's working directory, given as a filesystem path.
func (e *Env) SetCwd(fsPath string) error {
	f := e.cwdFile()
	if f == "" {
		return nil
	}
	if cur, _ := e.Cwd(); cur == fsPath {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o750); err != nil {
		return err
	}
	return writeFileAtomic(f, []byte(e.Display(fsPath)+"\n"), 0o600)
}

// Display maps a filesystem path to the form the agent sees: a path under
// Home becomes /home/agent/...; anything else is shown as it is.
func (e *Env) Display(fsPath string) string {
	if fsPath == e.Home {
		return DisplayHome
	}
	if rest, ok := strings.CutPrefix(fsPath, e.Home+string(filepath.Separator)); ok {
		return DisplayHome + "/" + filepath.ToSlash(rest)
	}
	return fsPath
}

// FromDisplay maps an absolute path as the agent sees it to the
// filesystem: /home/agent/... to Home/..., anything else unchanged.
func (e *Env) FromDisplay(p string) string {
	if p == DisplayHome {
		return e.Home
	}
	if rest, ok := strings.CutPrefix(p, DisplayHome+"/"); ok {
		return filepath.Join(e.Home, filepath.FromSlash(rest))
	}
	return p
}

// Rel is how results name a file: relative to the working directory when
// the file is under it, else its /home/agent form.
func (e *Env) Rel(fsPath string) string {
	cwd, _ := e.Cwd()
	if fsPath == cwd {
		return "."
	}
	if rest, ok := strings.CutPrefix(fsPath, cwd+string(filepath.Separator)); ok {
		return filepath.ToSlash(rest)
	}
	return e.Display(fsPath)
}
