package codeops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

// JobArg is the hidden first argument with which guilds-code re-executes
// itself as the supervisor of a background command: every tool call is a
// new helper process, so a background command needs a process of its own
// that waits for it and records how it ended.
const JobArg = "__job"

// Job states.
const (
	StateRunning = "running"
	StateExited  = "exited"
	StateStopped = "stopped"
	// StateLost: the supervisor is gone without recording an end (the
	// sandbox was stopped and started again, or it was killed).
	StateLost = "lost"
)

// jobStartWait bounds how long starting a job waits for its supervisor to
// report the command started.
const jobStartWait = 5 * time.Second

// jobSpec is what the helper hands the supervisor, in the job's folder.
type jobSpec struct {
	ID         string    `json:"id"`
	Command    string    `json:"command"`
	Dir        string    `json:"dir"`         // filesystem working directory
	Log        string    `json:"log"`         // filesystem log path
	LogDisplay string    `json:"log_display"` // the log as the agent sees it
	RunID      string    `json:"run_id"`
	Started    time.Time `json:"started"`
}

// jobStarted is written by the supervisor once the command runs.
type jobStarted struct {
	Supervisor int    `json:"supervisor"` // pid
	SupStart   string `json:"sup_start"`  // its start time in /proc, against pid reuse
	Pgid       int    `json:"pgid"`       // the command's process group
	Error      string `json:"error,omitempty"`
}

// jobEnd is written by the supervisor when the command has ended.
type jobEnd struct {
	ExitCode int       `json:"exit_code"`
	Ended    time.Time `json:"ended"`
}

func (e *Env) jobsDir() string { return filepath.Join(e.RunDir, "jobs") }

// startJob starts command in the background and returns its id at once.
func startJob(env *Env, command, logPath string) codeproto.Response {
	jobs := env.jobsDir()
	if err := os.MkdirAll(jobs, 0o750); err != nil {
		return Errorf("cannot keep background commands in %s: %v", jobs, err)
	}
	id, err := nextJobID(jobs)
	if err != nil {
		return Errorf("cannot number the background command: %v", err)
	}
	dir := filepath.Join(jobs, id)
	if err := os.Mkdir(dir, 0o750); err != nil {
		return Errorf("cannot create %s: %v", dir, err)
	}
	cwd, cwdDisplay := env.Cwd()
	spec := jobSpec{ID: id, Command: command, Dir: cwd, Log: logPath, LogDisplay: env.Display(logPath),
		RunID: env.Req.RunID, Started: time.Now().UTC()}
	if err := writeJSON(filepath.Join(dir, "job.json"), spec); err != nil {
		return Errorf("cannot record %s: %v", id, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return Errorf("cannot find the helper to supervise %s: %v", id, err)
	}
	cmd := exec.Command(exe, JobArg, dir) //nolint:gosec // G204: the helper itself
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The supervisor carries the command's environment as its own and
	// passes it on, so no value of it is written to the job's folder.
	cmd.Env = env.shellEnv()
	if errLog, err := os.OpenFile(filepath.Join(dir, "supervisor.err"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil { //nolint:gosec // G304: the job's own folder
		cmd.Stderr = errLog
		defer func() { _ = errLog.Close() }()
	}
	if err := cmd.Start(); err != nil {
		return Errorf("cannot start %s: %v", id, err)
	}
	// Reaped by whoever inherits it once this process exits (the sandbox's
	// init); this process does not wait.
	_ = cmd.Process.Release()

	st, err := waitStarted(dir)
	if err != nil {
		return Errorf("%s did not start: %v", id, err)
	}
	if st.Error != "" {
		return Errorf("%s did not start: %s", id, st.Error)
	}
	text := fmt.Sprintf("started %s in the background in %s; its output goes to %s. Check it with shell_status id %s.",
		id, cwdDisplay, spec.LogDisplay, id)
	return codeproto.Response{Text: text, Meta: map[string]any{"background_id": id, "state": StateRunning,
		"cwd": cwdDisplay, "log_path": spec.LogDisplay}}
}

// nextJobID allocates b1, b2, … under a lock, for the life of the jobs folder.
func nextJobID(jobs string) (string, error) {
	lock, err := os.OpenFile(filepath.Join(jobs, ".lock"), os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // G304: the jobs folder
	if err != nil {
		return "", err
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	counter := filepath.Join(jobs, ".next")
	n := 1
	if raw, err := os.ReadFile(counter); err == nil { //nolint:gosec // G304: the jobs folder
		if v, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && v > 0 {
			n = v
		}
	}
	if err := writeFileAtomic(counter, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
		return "", err
	}
	return "b" + strconv.Itoa(n), nil
}

func waitStarted(dir string) (jobStarted, error) {
	var st jobStarted
	deadline := time.Now().Add(jobStartWait)
	for {
		if err := readJSON(filepath.Join(dir, "started.json"), &st); err == nil {
			return st, nil
		}
		if time.Now().After(deadline) {
			msg, _ := os.ReadFile(filepath.Join(dir, "supervisor.err")) //nolint:gosec // G304: the job's folder
			if s := strings.TrimSpace(string(msg)); s != "" {
				return st, errors.New(lastLines(s, 1))
			}
			return st, fmt.Errorf("no word from its supervisor within %s", jobStartWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SuperviseJob is the supervisor: it runs the job in dir in its own process
// group, writes started.json, waits, and writes end.json. It returns the
// supervisor's exit code.
func SuperviseJob(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		_, _ = fmt.Fprintln(stderr, "guilds-code __job: expected the job's folder")
		return 2
	}
	dir := args[0]
	var spec jobSpec
	if err := readJSON(filepath.Join(dir, "job.json"), &spec); err != nil {
		_, _ = fmt.Fprintf(stderr, "guilds-code __job: %v\n", err)
		return 2
	}
	started := jobStarted{Supervisor: os.Getpid(), SupStart: procStart(os.Getpid())}
	log, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: the job's log, named by the helper
	if err != nil {
		started.Error = err.Error()
		_ = writeJSON(filepath.Join(dir, "started.json"), started)
		return 1
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command("bash", "-c", spec.Command) //nolint:gosec // G204: the agent's command
	if len(spec.Command) > maxArgScript {
		file := filepath.Join(dir, "command.sh")
		if err := os.WriteFile(file, []byte(spec.Command), 0o600); err != nil { //nolint:gosec // G703: the job folder the helper made
			started.Error = err.Error()
			_ = writeJSON(filepath.Join(dir, "started.json"), started)
			return 1
		}
		cmd = exec.Command("bash", file) //nolint:gosec // G204: as above
	}
	cmd.Dir = spec.Dir
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		started.Error = err.Error()
		_ = writeJSON(filepath.Join(dir, "started.json"), started)
		return 1
	}
	started.Pgid = cmd.Process.Pid
	if err := writeJSON(filepath.Join(dir, "started.json"), started); err != nil {
		_, _ = fmt.Fprintf(stderr, "guilds-code __job: %v\n", err)
	}
	err = cmd.Wait()
	end := jobEnd{ExitCode: exitCode(cmd.ProcessState, err), Ended: time.Now().UTC()}
	if err := writeJSON(filepath.Join(dir, "end.json"), end); err != nil {
		_, _ = fmt.Fprintf(stderr, "guilds-code __job: %v\n", err)
		return 1
	}
	return 0
}

// procStart is a process's start time in clock ticks since boot (field 22
// of /proc/<pid>/stat), "" when unknown; with the pid it names one process.
func procStart(pid int) string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	// after the command: state is field 3, starttime field 22
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}

// job is one background command as shell_status reports it.
type job struct {
	spec     jobSpec
	started  jobStarted
	state    string
	exitCode *int
	ended    time.Time
}

// loadJob reads a job's folder and works out its state.
func loadJob(dir string) (job, error) {
	var j job
	if err := readJSON(filepath.Join(dir, "job.json"), &j.spec); err != nil {
		return j, err
	}
	_ = readJSON(filepath.Join(dir, "started.json"), &j.started)
	var end jobEnd
	_, stopErr := os.Stat(filepath.Join(dir, "stopped"))
	switch {
	case readJSON(filepath.Join(dir, "end.json"), &end) == nil:
		j.state, j.exitCode, j.ended = StateExited, &end.ExitCode, end.Ended
		if stopErr == nil {
			j.state = StateStopped
		}
	case j.started.Error != "":
		j.state = StateExited
	case j.started.Supervisor == 0:
		// started.json not yet written: the supervisor is starting
		j.state = StateRunning
	case procStart(j.started.Supervisor) == j.started.SupStart && j.started.SupStart != "":
		j.state = StateRunning
	default:
		j.state = StateLost
	}
	return j, nil
}

// listJobs returns every job, oldest first.
func listJobs(jobs string) ([]job, error) {
	entries, err := os.ReadDir(jobs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []job
	for _, ent := range entries {
		if !ent.IsDir() || !jobIDPattern(ent.Name()) {
			continue
		}
		if j, err := loadJob(filepath.Join(jobs, ent.Name())); err == nil {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return jobNumber(out[a].spec.ID) < jobNumber(out[b].spec.ID) })
	return out, nil
}

func jobIDPattern(s string) bool { return jobNumber(s) > 0 }

func jobNumber(s string) int {
	rest, ok := strings.CutPrefix(s, "b")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || strconv.Itoa(n) != rest {
		return 0
	}
	return n
}

func writeJSON(path string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, raw, 0o600)
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the helper's own state files
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
