package codeops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

// statusTailLines is how much of a job's log shell_status shows.
const statusTailLines = 40

// ShellStatusArgs are shell_status's arguments.
type ShellStatusArgs struct {
	ID   string `json:"id"`
	Stop bool   `json:"stop"`
}

// ShellStatus runs the shell_status tool.
func ShellStatus(_ context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a ShellStatusArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	jobs, err := listJobs(env.jobsDir())
	if err != nil {
		return Errorf("cannot read the background commands: %v", err)
	}
	if a.ID == "" {
		if a.Stop {
			return Errorf("stop: needs id, the background command to end")
		}
		return listResult(jobs, env.MaxBytes())
	}
	if jobNumber(a.ID) == 0 {
		return Errorf("id: %q is not a background command id (b1, b2, …)", a.ID)
	}
	var j *job
	for i := range jobs {
		if jobs[i].spec.ID == a.ID {
			j = &jobs[i]
		}
	}
	if j == nil {
		return Errorf("id: there is no background command %s%s", a.ID, knownIDs(jobs))
	}
	dir := filepath.Join(env.jobsDir(), a.ID)
	if a.Stop && j.state == StateRunning {
		stopJob(dir, j.started.Pgid)
		if reloaded, err := loadJob(dir); err == nil {
			*j = reloaded
		}
	}
	return jobResult(env, *j, a.Stop)
}

func knownIDs(jobs []job) string {
	if len(jobs) == 0 {
		return " (none was started)"
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.spec.ID
	}
	return " (known: " + strings.Join(ids, ", ") + ")"
}

// stopJob ends a job's whole process group: SIGTERM, then SIGKILL
// KillGrace later, then waits briefly for the supervisor to record the end.
func stopJob(dir string, pgid int) {
	_ = os.WriteFile(filepath.Join(dir, "stopped"), nil, 0o600)
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		deadline := time.Now().Add(KillGrace)
		for groupAlive(pgid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if groupAlive(pgid) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	// The supervisor records the end once it has reaped the command.
	for range 500 {
		if _, err := os.Stat(filepath.Join(dir, "end.json")); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describeState(j job) string {
	switch {
	case j.state == StateExited && j.exitCode != nil:
		return fmt.Sprintf("exited %d", *j.exitCode)
	case j.state == StateExited:
		return "failed to start: " + j.started.Error
	case j.state == StateStopped && j.exitCode != nil:
		return fmt.Sprintf("stopped (exit %d)", *j.exitCode)
	case j.state == StateLost:
		return "lost (ended without a recorded exit; the sandbox restarted)"
	}
	return j.state
}

func clipCommand(c string) string {
	c = strings.Join(strings.Fields(c), " ")
	if r := []rune(c); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return c
}

// listResult lists the jobs, newest first, so a long list cut at the cap
// keeps the recent ones.
func listResult(jobs []job, max int) codeproto.Response {
	if len(jobs) == 0 {
		return codeproto.Response{Text: "no background commands", Meta: map[string]any{"jobs": 0}}
	}
	lines := make([]string, 0, len(jobs))
	running := 0
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		if j.state == StateRunning {
			running++
		}
		lines = append(lines, fmt.Sprintf("%s  %s  started %s  %s", j.spec.ID, describeState(j),
			j.spec.Started.Format(time.DateTime+" UTC"), clipCommand(j.spec.Command)))
	}
	totals := fmt.Sprintf("%s, %d running", plural(len(jobs), "background command", "background commands"), running)
	return codeproto.Response{Text: fitLines(lines, totals, max), Meta: map[string]any{"jobs": len(jobs), "running": running}}
}

func jobResult(env *Env, j job, stopRequested bool) codeproto.Response {
	meta := map[string]any{"background_id": j.spec.ID, "state": j.state}
	if j.exitCode != nil {
		meta["exit_code"] = *j.exitCode
	}
	var head strings.Builder
	if stopRequested && j.state != StateStopped {
		fmt.Fprintf(&head, "%s was not running; nothing to stop.\n", j.spec.ID)
	}
	fmt.Fprintf(&head, "%s %s: %s\n", j.spec.ID, describeState(j), clipCommand(j.spec.Command))
	fmt.Fprintf(&head, "log %s, last %d lines:\n", j.spec.LogDisplay, statusTailLines)

	max := env.MaxBytes()
	k, err := cleanLog(j.spec.Log, max)
	if err != nil {
		return codeproto.Response{Text: head.String() + "(no log: " + err.Error() + ")", Meta: meta}
	}
	tail := lastLines(string(k.last(max)), statusTailLines)
	if tail == "" {
		tail = "(no output)"
		if j.state == StateRunning {
			tail = "(no output yet)"
		}
	}
	if room := max - head.Len(); len(tail) > room {
		tail = string(cutTail([]byte(tail[len(tail)-room:])))
	}
	return codeproto.Response{Text: head.String() + tail, Meta: meta}
}
