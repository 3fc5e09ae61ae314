package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/native/scripts/runproto"
)

// serve runs one script. A refusal is an "ERROR: ..." result naming the
// field, never a failure of the helper.
func serve(ctx context.Context, req codeproto.Request) codeproto.Response {
	if req.Tool != runproto.Tool {
		return codeops.Errorf("tool: %q is not %s", req.Tool, runproto.Tool)
	}
	env, err := codeops.NewEnv(req)
	if err != nil {
		return codeops.Errorf("%v", err)
	}
	var a runproto.Args
	if err := json.Unmarshal(req.Args, &a); err != nil {
		return codeops.Errorf("arguments: %v", err)
	}
	if !runproto.Name.MatchString(a.Name) {
		return codeops.Errorf("name: %q is not a script name (%s)", a.Name, runproto.Name)
	}
	stdin := bytes.TrimSpace(a.Arguments)
	if len(stdin) == 0 || string(stdin) == "null" {
		stdin = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(stdin, &obj); err != nil {
		return codeops.Errorf("arguments: must be a JSON object: %v", err)
	}
	script := env.FromDisplay(runproto.Path(a.Name))
	if st, err := os.Stat(script); err != nil || !st.Mode().IsRegular() { //nolint:gosec // G703: the script's own file under /home/agent/scripts
		return codeops.Errorf("name: script %s has no file at %s", a.Name, runproto.Path(a.Name))
	}
	env.TouchRun()
	runDir, err := env.RunFolder()
	if err != nil {
		return codeops.Errorf("%v", err)
	}
	if err := os.MkdirAll(runDir, 0o750); err != nil { //nolint:gosec // G703: the run folder; run and call ids are plain names (codeops.NewEnv checks them)
		return codeops.Errorf("cannot create the run folder %s: %v", env.Display(runDir), err)
	}
	callName := req.CallID
	if callName == "" {
		callName = "script-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	stdinFile := filepath.Join(runDir, callName+".stdin.json")
	if err := os.WriteFile(stdinFile, stdin, 0o600); err != nil { //nolint:gosec // G703: as above
		return codeops.Errorf("cannot write the script's stdin to %s: %v", env.Display(stdinFile), err)
	}
	defer func() { _ = os.Remove(stdinFile) }() //nolint:gosec // G703: as above

	// The script runs from /home/agent whatever the run's shell stands in;
	// env -C leaves the shell's own directory (the run's cwd) untouched.
	command := "env -C " + quote(env.Home) + " python3 " + quote(script) + " <" + quote(stdinFile)
	shellArgs, _ := json.Marshal(codeops.ShellArgs{Command: command, TimeoutSeconds: a.Limit().Seconds()})
	// Shell's shaping fills its cap; the time line needs room after it.
	capBytes := env.MaxBytes()
	env.Req.MaxBytes = max(capBytes-timeLineRoom, 1)
	started := time.Now()
	resp := codeops.Shell(ctx, env, shellArgs)
	env.Req.MaxBytes = capBytes
	took := time.Since(started)
	if strings.HasPrefix(resp.Text, "ERROR: ") {
		return resp
	}
	if resp.Meta == nil {
		resp.Meta = map[string]any{}
	}
	delete(resp.Meta, "cwd")
	resp.Meta["script"] = a.Name
	resp.Meta["duration_ms"] = took.Milliseconds()
	resp.Text += fmt.Sprintf("\ntime: %.2f s", took.Seconds())
	resp.Text = codeops.CapText(resp.Text, env.MaxBytes())
	return resp
}

// timeLineRoom is kept free in the result for the time line.
const timeLineRoom = 32

// quote quotes s for bash.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
