package codeops

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

// waitJob polls shell_status until the job leaves the running state.
func waitJob(t *testing.T, env *Env, id string) codeproto.Response {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := call(t, env, ShellStatus, `{"id":"`+id+`"}`)
		if res.Meta["state"] != StateRunning || time.Now().After(deadline) {
			return res
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBackgroundJobLifecycle(t *testing.T) {
	env := testEnv(t)
	if res := call(t, env, ShellStatus, `{}`); res.Text != "no background commands" {
		t.Fatalf("%q", res.Text)
	}
	must(t, os.MkdirAll(filepath.Join(env.Home, "work"), 0o755))
	call(t, env, Shell, shellArgs("cd work"))

	// b1 finishes on its own with exit 3; its log is its output.
	env.Req.CallID = "c2"
	res := call(t, env, Shell, shellArgs(`for i in $(seq 1 50); do echo "line $i"; done; echo "in $(pwd) as $GUILD_RUN_ID"; exit 3`, `,"background":true`))
	if res.Meta["background_id"] != "b1" || res.Meta["state"] != StateRunning || res.Meta["log_path"] != "/home/agent/.runs/r1/c2.log" {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	if !strings.HasPrefix(res.Text, "started b1 in the background in /home/agent/work") {
		t.Fatalf("%q", res.Text)
	}
	st := waitJob(t, env, "b1")
	if raw, _ := os.ReadFile(filepath.Join(env.jobsDir(), "b1", "job.json")); strings.Contains(string(raw), "GUILD_RUN_ID=") || strings.Contains(string(raw), `"env"`) {
		t.Fatalf("the environment was written to the job's folder: %s", raw)
	}
	if st.Meta["state"] != StateExited || st.Meta["exit_code"] != 3 {
		t.Fatalf("%q %v", st.Text, st.Meta)
	}
	lines := strings.Split(st.Text, "\n")
	if lines[0] != `b1 exited 3: for i in $(seq 1 50); do echo "line $i"; done; echo "in $(pwd) as $GUILD_RUN_ID"…` ||
		len(lines) != 2+40 || lines[2] != "line 12" || lines[len(lines)-1] != "in "+filepath.Join(env.Home, "work")+" as r1" {
		t.Fatalf("status:\n%s", st.Text)
	}

	// b2 runs until stopped, with a child that ignores SIGTERM: the whole
	// group ends.
	env.Req.CallID = "c3"
	pids := filepath.Join(env.Home, "b2.pids")
	res = call(t, env, Shell, shellArgs("trap '' TERM; sleep 300 & echo serving; echo $$ > "+pids+"; wait", `,"background":true`))
	if res.Meta["background_id"] != "b2" {
		t.Fatalf("%q", res.Text)
	}
	list := call(t, env, ShellStatus, `{}`)
	if !strings.Contains(list.Text, "b1  exited 3") || !strings.Contains(list.Text, "b2  running") ||
		!strings.HasSuffix(list.Text, "2 background commands, 1 running") {
		t.Fatalf("list:\n%s", list.Text)
	}
	waitFile(t, pids)
	raw, _ := os.ReadFile(pids)
	pgid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	must(t, err)
	stop := call(t, env, ShellStatus, `{"id":"b2","stop":true}`)
	if stop.Meta["state"] != StateStopped || stop.Meta["exit_code"] == nil || !strings.Contains(stop.Text, "serving") {
		t.Fatalf("stop: %q %v", stop.Text, stop.Meta)
	}
	if groupAlive(pgid) {
		t.Fatalf("group %d survived the stop", pgid)
	}
	// Stopping again changes nothing and says so.
	again := call(t, env, ShellStatus, `{"id":"b2","stop":true}`)
	if again.Meta["state"] != StateStopped || !strings.Contains(again.Text, "b2 stopped") {
		t.Fatalf("%q", again.Text)
	}

	// Numbering goes on across runs of the same container.
	other, err := NewTestEnv(env.Home, codeproto.Request{RunID: "r2", CallID: "c1"})
	must(t, err)
	if res := call(t, other, Shell, shellArgs("true", `,"background":true`)); res.Meta["background_id"] != "b3" {
		t.Fatalf("%q", res.Text)
	}
	waitJob(t, other, "b3") // its supervisor writes into the home until it ends
}

func TestBackgroundJobLostWhenItsSupervisorDies(t *testing.T) {
	env := testEnv(t)
	res := call(t, env, Shell, shellArgs("sleep 300", `,"background":true`))
	var started jobStarted
	must(t, readJSON(filepath.Join(env.jobsDir(), "b1", "started.json"), &started))
	must(t, syscall.Kill(started.Supervisor, syscall.SIGKILL))
	defer func() { _ = syscall.Kill(-started.Pgid, syscall.SIGKILL) }()
	st := waitJob(t, env, "b1")
	if st.Meta["state"] != StateLost || !strings.Contains(st.Text, "b1 lost") {
		t.Fatalf("%q %v (%s)", st.Text, st.Meta, res.Text)
	}
}

func TestShellStatusBadArguments(t *testing.T) {
	env := testEnv(t)
	call(t, env, Shell, shellArgs("true", `,"background":true`))
	waitJob(t, env, "b1")
	for args, want := range map[string]string{
		`{"id":"b9"}`:   "ERROR: id: there is no background command b9 (known: b1)",
		`{"id":"x1"}`:   `ERROR: id: "x1" is not a background command id`,
		`{"stop":true}`: "ERROR: stop: needs id",
		`{"id":"b01"}`:  `ERROR: id: "b01" is not a background command id`,
		`{"id":1}`:      "ERROR: id: must be a string, not number",
	} {
		if res := call(t, env, ShellStatus, args); !strings.HasPrefix(res.Text, want) {
			t.Errorf("%s: %q, want %q", args, res.Text, want)
		}
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for range 500 {
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", p)
}

func TestBackgroundCommandLongerThanAnArgument(t *testing.T) {
	env := testEnv(t)
	body := strings.Repeat("x", 150<<10)
	call(t, env, Shell, shellArgs("v='"+body+"'; echo ${#v}", `,"background":true`))
	if st := waitJob(t, env, "b1"); st.Meta["exit_code"] != 0 || !strings.HasSuffix(st.Text, "\n153600") {
		t.Fatalf("%.300q", st.Text)
	}
}

// TestGrantedSecretsReachCommandsOnly: the request's Env reaches a command,
// foreground and background, cannot replace a fixed variable, and is
// written to no file of the helper's.
func TestGrantedSecretsReachCommandsOnly(t *testing.T) {
	env := testEnv(t)
	env.Req.Env = map[string]string{"API_TOKEN": "tok-123", "HOME": "/evil", "GUILD_RUN_ID": "forged", "bad name": "x"}
	res := call(t, env, Shell, shellArgs(`echo "$API_TOKEN $HOME $GUILD_RUN_ID"`))
	if res.Text != "tok-123 "+env.Home+" r1" {
		t.Fatalf("%q", res.Text)
	}
	env.Req.CallID = "c2"
	call(t, env, Shell, shellArgs(`echo "bg $API_TOKEN $GUILD_RUN_ID"`, `,"background":true`))
	if st := waitJob(t, env, "b1"); !strings.HasSuffix(st.Text, "\nbg tok-123 r1") {
		t.Fatalf("%q", st.Text)
	}
	for _, dir := range []string{env.jobsDir() + "/b1", filepath.Join(env.Home, ".runs/r1")} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			raw, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if strings.HasSuffix(e.Name(), ".log") {
				continue // the command's own output: it printed the value
			}
			if strings.Contains(string(raw), "tok-123") {
				t.Errorf("%s holds the secret: %s", e.Name(), raw)
			}
		}
	}
}
