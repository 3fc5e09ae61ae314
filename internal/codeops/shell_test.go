package codeops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

// call runs one tool function with JSON arguments.
func call(t testing.TB, env *Env, f func(context.Context, *Env, json.RawMessage) codeproto.Response, args string) codeproto.Response {
	t.Helper()
	return f(context.Background(), env, json.RawMessage(args))
}

func shellArgs(command string, extra ...string) string {
	raw, _ := json.Marshal(command)
	return `{"command":` + string(raw) + strings.Join(extra, "") + `}`
}

func TestShellEnvironmentIsTheSpecsOnly(t *testing.T) {
	t.Setenv("GUILDS_SECRET_FOR_TEST", "s3cret")
	env := testEnv(t)
	env.Req.AgentID = "agent-7"
	res := call(t, env, Shell, shellArgs("env | sort; read -r x && echo read-something || echo stdin-closed"))
	got := map[string]string{}
	for _, l := range strings.Split(res.Text, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	for k, v := range map[string]string{"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1",
		"TERM": "dumb", "DEBIAN_FRONTEND": "noninteractive", "GUILD_RUN_ID": "r1", "GUILD_AGENT_ID": "agent-7", "HOME": env.Home} {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if strings.Contains(res.Text, "s3cret") || strings.Contains(res.Text, "GUILDS_") {
		t.Errorf("the helper's environment leaked:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "stdin-closed") {
		t.Errorf("stdin not closed:\n%s", res.Text)
	}
	if res.Meta["exit_code"] != 0 || res.Meta["timed_out"] != false || res.Meta["cwd"] != "/home/agent" {
		t.Errorf("meta %v", res.Meta)
	}
}

func TestShellExitCodeAndOutput(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct{ cmd, want string }{
		{"echo hi", "hi"},
		{"true", "(no output)"},
		{"echo out; echo err >&2; exit 3", "out\nerr\nexit_code: 3"},
		{"exit 1", "exit_code: 1"},
		{"kill -9 $$", "exit_code: 137"},
		{"if then", "exit_code: 2"},
	} {
		res := call(t, env, Shell, shellArgs(tc.cmd))
		if !strings.HasSuffix(res.Text, tc.want) {
			t.Errorf("%q: %q, want suffix %q", tc.cmd, res.Text, tc.want)
		}
	}
}

func TestShellWorkingDirectoryCarriesOverAndEnvDoesNot(t *testing.T) {
	env := testEnv(t)
	res := call(t, env, Shell, shellArgs("mkdir -p repos/app && cd repos/app && export FOO=bar"))
	if res.Meta["cwd"] != "/home/agent/repos/app" {
		t.Fatalf("cwd %v (%s)", res.Meta["cwd"], res.Text)
	}
	res = call(t, env, Shell, shellArgs(`pwd; echo "FOO=[$FOO]"`))
	if res.Text != filepath.Join(env.Home, "repos/app")+"\nFOO=[]" {
		t.Fatalf("%q", res.Text)
	}
	// A failing command after a cd still moves; a cd in a subshell does not.
	call(t, env, Shell, shellArgs("(cd /); cd .. && false"))
	if _, d := env.Cwd(); d != "/home/agent/repos" {
		t.Fatalf("cwd %q", d)
	}
	// The folder the run stands in goes away: the next call starts at home.
	must(t, os.RemoveAll(filepath.Join(env.Home, "repos")))
	if res := call(t, env, Shell, shellArgs("pwd")); res.Text != env.Home {
		t.Fatalf("%q", res.Text)
	}
}

func TestShellFullLogAndShapedResult(t *testing.T) {
	env := testEnv(t)
	src := writeTestFile(t, env, "build.log", longOutput())
	res := call(t, env, Shell, shellArgs("cat "+src+"; exit 1"))
	log := "/home/agent/.runs/r1/c1.log"
	if res.Meta["log_path"] != log || len(res.Text) > env.MaxBytes() {
		t.Fatalf("meta %v, %d bytes", res.Meta, len(res.Text))
	}
	raw, err := os.ReadFile(filepath.Join(env.Home, ".runs/r1/c1.log"))
	if err != nil || string(raw) != longOutput() {
		t.Fatalf("the log is not the full, raw output: %v", err)
	}
	golden(t, "shell_result.golden", res.Text)
}

func TestShellShapingFollowsTheCap(t *testing.T) {
	env := testEnv(t)
	env.Req.MaxBytes = 1000
	res := call(t, env, Shell, shellArgs("seq 1 5000"))
	if len(res.Text) > 1000 || !strings.HasPrefix(res.Text, "1\n2\n") || !strings.HasSuffix(res.Text, "\n5000") ||
		!strings.Contains(res.Text, "bytes elided; the full output is in /home/agent/.runs/r1/c1.log") {
		t.Fatalf("%d bytes:\n%s", len(res.Text), res.Text)
	}
}

// survivors lists the live processes whose environment holds marker (a
// GUILD_AGENT_ID only one test uses), whenever they were started.
func survivors(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + ent.Name() + "/environ")
		if err != nil || !strings.Contains(string(raw), marker+"\x00") {
			continue
		}
		if state, _, ok := procState(pid); ok && state != "Z" {
			cmdline, _ := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
			out = append(out, ent.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

func TestSurvivorsSeesALiveProcess(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.Env = []string{"GUILD_AGENT_ID=survivor-check"}
	must(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if left := survivors(t, "GUILD_AGENT_ID=survivor-check"); len(left) != 1 {
		t.Fatalf("%v", left)
	}
}

// TestShellTimeoutStopsTheWholeGroup: a command that ignores SIGTERM, with
// children of its own, is killed 2 s later, reported as exit 124, and leaves
// no process behind.
func TestShellTimeoutStopsTheWholeGroup(t *testing.T) {
	env := testEnv(t)
	env.Req.AgentID = "timeout-" + filepath.Base(env.Home)
	res := call(t, env, Shell, shellArgs("trap '' TERM; sleep 300 & (trap '' TERM; sleep 300) & echo started; sleep 300", `,"timeout_seconds":1`))
	if res.Meta["exit_code"] != ExitTimeout || res.Meta["timed_out"] != true {
		t.Fatalf("meta %v", res.Meta)
	}
	if !strings.HasSuffix(res.Text, "[timed out after 1s: the command's process group got SIGTERM, then SIGKILL 2s later]\nexit_code: 124") {
		t.Fatalf("%q", res.Text)
	}
	if left := survivors(t, "GUILD_AGENT_ID="+env.Req.AgentID); len(left) > 0 {
		t.Fatalf("processes survived the timeout: %v", left)
	}
}

func TestShellTimeoutOfAPoliteCommand(t *testing.T) {
	env := testEnv(t)
	env.Req.AgentID = "polite-" + filepath.Base(env.Home)
	res := call(t, env, Shell, shellArgs("sleep 300", `,"timeout_seconds":1`))
	if res.Text != "[timed out after 1s: the command's process group got SIGTERM]\nexit_code: 124" {
		t.Fatalf("%q", res.Text)
	}
	if left := survivors(t, "GUILD_AGENT_ID="+env.Req.AgentID); len(left) > 0 {
		t.Fatalf("processes survived the timeout: %v", left)
	}
}

func TestShellBadArguments(t *testing.T) {
	env := testEnv(t)
	for args, want := range map[string]string{
		`{"command":""}`:                         "ERROR: command: is empty",
		`{"command":"ls","timeout_seconds":601}`: "ERROR: timeout_seconds: 601 is out of range",
		`{"command":"ls","timeout_seconds":-1}`:  "ERROR: timeout_seconds: -1 is out of range",
		`{"command":1}`:                          "ERROR: command: must be a string, not number",
		`{"command":"echo a\u0000b"}`:            "ERROR: command: contains a NUL byte",
	} {
		if res := call(t, env, Shell, args); !strings.HasPrefix(res.Text, want) {
			t.Errorf("%s: %q, want %q", args, res.Text, want)
		}
	}
	noRun, err := NewTestEnv(t.TempDir(), codeproto.Request{CallID: "c1"})
	must(t, err)
	if res := call(t, noRun, Shell, shellArgs("ls")); res.Text != "ERROR: run_id is required" {
		t.Errorf("%q", res.Text)
	}
}

func TestRunsKeepsTheTwentyMostRecent(t *testing.T) {
	home := t.TempDir()
	for i := range 25 {
		env, err := NewTestEnv(home, codeproto.Request{RunID: "run" + strconv.Itoa(i), CallID: "c"})
		must(t, err)
		// Distinct, increasing times without sleeping.
		env.TouchRun()
		dir, _ := env.RunFolder()
		tm := syscallTime(int64(1000 + i))
		must(t, os.Chtimes(dir, tm, tm))
	}
	env, err := NewTestEnv(home, codeproto.Request{RunID: "run3", CallID: "c"})
	must(t, err)
	env.TouchRun() // run3 is used again: it is now the most recent
	entries, _ := os.ReadDir(filepath.Join(home, ".runs"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	joined := " " + strings.Join(names, " ") + " "
	if len(names) != 20 || !strings.Contains(joined, " run3 ") || strings.Contains(joined, " run5 ") || !strings.Contains(joined, " run24 ") {
		t.Fatalf("%v", names)
	}
}

func TestGroupAliveOfAMissingGroup(t *testing.T) {
	// A pid far above pid_max's default names no group.
	if groupAlive(4194000) {
		t.Fatal("alive")
	}
	if err := syscall.Kill(-4194000, 0); !errors.Is(err, syscall.ESRCH) {
		t.Skipf("pid 4194000 exists here: %v", err)
	}
}

func TestShellStoppedWithTheCall(t *testing.T) {
	env := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 1000 {
			if _, err := os.Stat(filepath.Join(env.Home, "go")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res := Shell(ctx, env, json.RawMessage(shellArgs("touch go; sleep 300", `,"timeout_seconds":60`)))
	if res.Meta["exit_code"] != ExitTimeout || !strings.Contains(res.Text, "[stopped before its timeout, with the tool call") {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
}

func TestMayChangeDir(t *testing.T) {
	for cmd, want := range map[string]bool{
		"go test ./...": false, "ls -la": false, "git status && git diff": false, "cat a.txt | wc -l": false,
		"make -C sub": false, "python3 x.py": false, "./run.sh": false, "ls ..": false,
		"cd repos": true, "mkdir x && cd x": true, "pushd /tmp": true, "popd": true, "builtin cd": true,
		"source env.sh": true, ". env.sh": true, "ls; . ./env": true, "eval \"$X\"": true, "$CMD /tmp": true,
		"`echo cd` /tmp": true, "f() { cd /; }; f": true, "(. x)": true,
	} {
		if got := mayChangeDir(cmd); got != want {
			t.Errorf("mayChangeDir(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestShellCommandLongerThanAnArgument(t *testing.T) {
	env := testEnv(t)
	body := strings.Repeat("0123456789", 20000) // 200 KB, over MAX_ARG_STRLEN
	res := call(t, env, Shell, shellArgs("mkdir -p d && cd d && cat > big.txt <<'EOF'\n"+body+"\nEOF\nwc -c < big.txt"))
	if res.Text != "200001" || res.Meta["cwd"] != "/home/agent/d" {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	if _, err := os.Stat(filepath.Join(env.Home, ".runs/r1/c1.log.sh")); !os.IsNotExist(err) {
		t.Fatal("the script file was left behind")
	}
}
