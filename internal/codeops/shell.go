package codeops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

// Shell timeouts (timeout_seconds) and the grace between SIGTERM and SIGKILL.
const (
	ShellDefaultTimeout = 120 * time.Second
	ShellMaxTimeout     = 600 * time.Second
	KillGrace           = 2 * time.Second
	// ExitTimeout is the exit code of a command stopped at its timeout.
	ExitTimeout = 124
)

// maxArgScript is the longest script passed to bash -c as an argument.
const maxArgScript = 100 << 10

// defaultPath is the PATH of a shell command when the helper has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ShellArgs are shell's arguments.
type ShellArgs struct {
	Command        string  `json:"command"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	Background     bool    `json:"background"`
}

// Shell runs the shell tool.
func Shell(ctx context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a ShellArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return Errorf("command: is empty")
	}
	if strings.ContainsRune(a.Command, 0) {
		return Errorf("command: contains a NUL byte, which bash cannot take")
	}
	if a.TimeoutSeconds < 0 || a.TimeoutSeconds > ShellMaxTimeout.Seconds() {
		return Errorf("timeout_seconds: %v is out of range (1 to %d, default %d)", a.TimeoutSeconds,
			int(ShellMaxTimeout.Seconds()), int(ShellDefaultTimeout.Seconds()))
	}
	timeout := ShellDefaultTimeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds * float64(time.Second))
	}
	run, err := env.RunFolder()
	if err != nil {
		return Errorf("%v", err)
	}
	if err := os.MkdirAll(run, 0o750); err != nil {
		return Errorf("cannot create the run folder %s: %v", env.Display(run), err)
	}
	logPath := filepath.Join(run, env.callName()+".log")
	env.ensureGitRelay(ctx)
	if a.Background {
		return startJob(env, a.Command, logPath)
	}
	res, err := runForeground(ctx, env, a.Command, timeout, logPath)
	if err != nil {
		return Errorf("%v", err)
	}
	return shapeShell(env, res, logPath, timeout)
}

// callName names this call's files in the run folder.
func (e *Env) callName() string {
	if e.Req.CallID != "" {
		return e.Req.CallID
	}
	return "call-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// shellEnv is a command's whole environment: the agent's granted secrets
// (the request's Env), then the spec's fixed variables, the run and agent
// ids, HOME, and the helper's PATH and LANG, which a secret cannot replace.
// Nothing else of the helper's environment reaches a command.
func (e *Env) shellEnv() []string {
	fixed := append(e.fixedEnv(), e.gitEnv()...)
	return append(secretEnv(e.Req.Env, fixed), fixed...)
}

// gitEnv is GitHub's part of a command's environment when the generation
// wrote tokens (gittokens): the credential helper (and the proxy to GitHub,
// when the sandbox has no network) through GIT_CONFIG_COUNT and the
// HTTPS_PROXY variables,
// which git reads after every configuration file, where the helper finds
// the tokens when not at their usual place, and GH_TOKEN, the token of the repository holding the working
// directory, for gh.
func (e *Env) gitEnv() []string {
	path := filepath.Join(e.RunDir, filepath.Base(gittokens.Path))
	f, err := gittokens.Read(path)
	if err != nil {
		return nil
	}
	out := append(f.GitConfigEnv(), f.ProxyEnv()...)
	if path != gittokens.Path {
		// Only the local development driver keeps it elsewhere.
		out = append(out, gittokens.EnvPath+"="+path)
	}
	if _, cwd := e.Cwd(); cwd != "" {
		if t, ok := f.ForDir(cwd); ok {
			out = append(out, "GH_TOKEN="+t.Token)
		}
	}
	return out
}

// ensureGitRelay starts the sandbox's relay to the worker's GitHub proxy
// when the generation's tokens name one and nothing answers (the sandbox
// restarted since), through the credential helper's relay mode. A failure
// is not the call's: git then says it cannot reach the proxy.
func (e *Env) ensureGitRelay(ctx context.Context) {
	f, err := gittokens.Read(filepath.Join(e.RunDir, filepath.Base(gittokens.Path)))
	if err != nil || f.Proxy == "" || f.Helper == "" || gittokens.RelayUp() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, f.Helper, gittokens.RelayArg).Run() //nolint:gosec // G204: the platform's helper, named by the platform's file
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secretEnv lists the request's variables in name order, leaving out a name
// the fixed variables take and anything that cannot be a variable.
func secretEnv(vars map[string]string, fixed []string) []string {
	if len(vars) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(fixed))
	for _, kv := range fixed {
		name, _, _ := strings.Cut(kv, "=")
		taken[name] = true
	}
	names := make([]string, 0, len(vars))
	for name, v := range vars {
		if envName.MatchString(name) && !taken[name] && !strings.HasPrefix(name, "GUILD_") && !strings.HasPrefix(name, "GUILDS_") && !strings.ContainsRune(v, 0) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = name + "=" + vars[name]
	}
	return out
}

func (e *Env) fixedEnv() []string {
	path := e.BaseEnv["PATH"]
	if path == "" {
		path = defaultPath
	}
	lang := e.BaseEnv["LANG"]
	if lang == "" {
		lang = "C.UTF-8"
	}
	return []string{
		"HOME=" + e.Home,
		"PATH=" + path,
		"LANG=" + lang,
		"PAGER=cat",
		"GIT_PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
		"NO_COLOR=1",
		"TERM=dumb",
		"DEBIAN_FRONTEND=noninteractive",
		"GUILD_RUN_ID=" + e.Req.RunID,
		"GUILD_AGENT_ID=" + e.Req.AgentID,
	}
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// foreground is how a command ended.
type foreground struct {
	exitCode int
	timedOut bool
	killed   bool // the group outlived SIGTERM and got SIGKILL
	canceled bool // the helper itself was told to stop
	cwd      string
}

// runForeground runs command with bash -c in the run's working directory,
// output to logPath, in its own process group. The script first sets an
// EXIT trap that records the final working directory, so a cd carries over
// to the next call; exported variables die with the shell.
func runForeground(ctx context.Context, env *Env, command string, timeout time.Duration, logPath string) (foreground, error) {
	var res foreground
	cwd, _ := env.Cwd()
	pwdFile := logPath + ".pwd"
	_ = os.Remove(pwdFile)
	script := command
	if mayChangeDir(command) {
		trap := "builtin pwd -P >" + shellQuote(pwdFile) + " 2>/dev/null"
		script = "trap " + shellQuote(trap) + " EXIT\n" + command
	}

	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: the call's log in the run folder
	if err != nil {
		return res, fmt.Errorf("cannot create the log %s: %v", env.Display(logPath), err)
	}
	defer func() { _ = log.Close() }()

	cmd := exec.Command("bash", "-c", script) //nolint:gosec // G204: running the agent's command is the tool
	if len(script) > maxArgScript {
		// One argument may not pass 128 KiB (MAX_ARG_STRLEN): a longer
		// command runs from a file.
		file := logPath + ".sh"
		if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
			return res, fmt.Errorf("cannot write the command to %s: %v", env.Display(file), err)
		}
		defer func() { _ = os.Remove(file) }()
		cmd = exec.Command("bash", file) //nolint:gosec // G204: as above
	}
	cmd.Dir = cwd
	cmd.Env = env.shellEnv()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("cannot start bash: %v", err)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		res.timedOut = true
	case <-ctx.Done():
		res.timedOut, res.canceled = true, true
	}
	if res.timedOut {
		res.killed = stopGroup(pgid, done)
		res.exitCode = ExitTimeout
	} else {
		res.exitCode = exitCode(cmd.ProcessState, waitErr)
	}

	if raw, err := os.ReadFile(pwdFile); err == nil { //nolint:gosec // G304: written by the trap above
		if d := strings.TrimSpace(string(raw)); d != "" {
			if st, err := os.Stat(d); err == nil && st.IsDir() { //nolint:gosec // G703: where the command ended; a run may stand anywhere, as a shell can
				_ = env.SetCwd(d)
			}
		}
	}
	_ = os.Remove(pwdFile)
	_, res.cwd = env.Cwd()
	return res, nil
}

// dirWords are the ways a bash command line can change the shell's own
// directory: the directory builtins, and running code the line does not
// spell out (sourcing, eval, expansions and substitutions as commands).
var dirWords = regexp.MustCompile("cd|pushd|popd|source|eval|[$`]|(^|[\\s;&|(){}])\\.($|\\s)")

// mayChangeDir reports whether command could leave bash in another
// directory. When it cannot, the EXIT trap that records the directory is
// left out: a trap keeps bash from running the last command in its own
// process, which costs a fork on every call.
func mayChangeDir(command string) bool {
	return dirWords.MatchString(command)
}

// stopGroup ends a process group: SIGTERM, then SIGKILL KillGrace later if
// any member is left. done delivers the leader's Wait. It returns whether
// SIGKILL was needed, once the leader is reaped and the group is gone (or
// a last grace has passed).
func stopGroup(pgid int, done <-chan error) (killed bool) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	reaped := false
	deadline := time.After(KillGrace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			_ = err // the leader's end is reported as the timeout
			reaped = true
			done = nil
		case <-tick.C:
			if reaped && !groupAlive(pgid) {
				return false
			}
		case <-deadline:
			break wait
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if !reaped {
		err := <-done
		_ = err // reported as the timeout
	}
	// SIGKILL cannot be refused; give the kernel a moment to finish them.
	for range 500 {
		if !groupAlive(pgid) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// groupAlive reports whether a process group has a live member left. A
// zombie (ended, not yet reaped by its new parent) does not count.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if state, pg, ok := procState(pid); ok && pg == pgid && state != "Z" {
			return true
		}
	}
	return false
}

// procState reads a process's state letter and process group from
// /proc/<pid>/stat.
func procState(pid int) (state string, pgid int, ok bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pg, err := strconv.Atoi(f[2])
	return f[0], pg, err == nil
}

// exitCode is a finished process's code, 128+N when signal N ended it.
func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return 1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// shapeShell builds shell's result from its log: cleaned, whole when it
// fits, else its start and end around the elision line; then the timeout
// line and exit_code: N when not 0.
func shapeShell(env *Env, res foreground, logPath string, timeout time.Duration) codeproto.Response {
	var trailer strings.Builder
	if res.timedOut {
		how := "SIGTERM"
		if res.killed {
			how = "SIGTERM, then SIGKILL " + KillGrace.String() + " later"
		}
		if res.canceled {
			fmt.Fprintf(&trailer, "[stopped before its timeout, with the tool call: the command's process group got %s]\n", how)
		} else {
			fmt.Fprintf(&trailer, "[timed out after %s: the command's process group got %s]\n", timeout, how)
		}
	}
	if res.exitCode != 0 {
		fmt.Fprintf(&trailer, "exit_code: %d\n", res.exitCode)
	}
	meta := map[string]any{"exit_code": res.exitCode, "cwd": res.cwd, "timed_out": res.timedOut}

	max := env.MaxBytes()
	k, err := cleanLog(logPath, max)
	if err != nil {
		return Errorf("cannot read the log %s: %v", env.Display(logPath), err)
	}
	budget := max - trailer.Len() - 1
	body, elided := shapeLong(k, budget, env.Display(logPath))
	if elided > 0 {
		meta["log_path"] = env.Display(logPath)
	}
	var b strings.Builder
	b.WriteString(body)
	if body != "" && !strings.HasSuffix(body, "\n") && trailer.Len() > 0 {
		b.WriteByte('\n')
	}
	if body == "" && trailer.Len() == 0 {
		b.WriteString("(no output)")
	}
	b.WriteString(trailer.String())
	return codeproto.Response{Text: strings.TrimSuffix(b.String(), "\n"), Meta: meta}
}

// cleanLog reads a log through the cleaner, keeping n bytes at each end.
func cleanLog(path string, n int) (*keeper, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a log in the run folder
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return cleanFile(f, n)
}
