package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox/helper"
)

// The helper on the host, over a directory standing for /home/agent (the
// local driver's layout). The sandbox image tests are in
// internal/native/scripts.

func home(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed on this host")
	}
	root := t.TempDir()
	h := filepath.Join(root, "home/agent")
	for _, d := range []string{filepath.Join(h, "scripts"), filepath.Join(root, "run/guilds/requests")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(codeops.SandboxRootEnv, "")
	t.Setenv(codeproto.HomeEnv, h)
	return h
}

func script(t *testing.T, h, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h, "scripts", name+".py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, args string) codeproto.Response {
	t.Helper()
	arg, err := helper.Encode(codeproto.Request{Tool: "script_run", Args: json.RawMessage(args), RunID: "r1", CallID: "c1", AgentID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{arg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	resp, err := helper.Decode[codeproto.Response](stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestStdinIsTheArgumentsObjectOrEmpty(t *testing.T) {
	h := home(t)
	script(t, h, "echo", "import json, os, sys\nargs = json.load(sys.stdin)\nprint(json.dumps(args, sort_keys=True), os.getcwd() == os.environ['HOME'])\n")
	resp := call(t, `{"name":"echo","arguments":{"b":2,"a":"x"}}`)
	if !strings.HasPrefix(resp.Text, `{"a": "x", "b": 2} True`+"\ntime: ") || resp.Meta["exit_code"] != float64(0) {
		t.Fatalf("%q %v", resp.Text, resp.Meta)
	}
	if resp = call(t, `{"name":"echo"}`); !strings.HasPrefix(resp.Text, "{} True\n") {
		t.Fatalf("no arguments: %q", resp.Text)
	}
	if _, ok := resp.Meta["duration_ms"]; !ok || resp.Meta["script"] != "echo" {
		t.Fatalf("meta %v", resp.Meta)
	}
	// The stdin file does not outlive the call.
	if left, _ := filepath.Glob(filepath.Join(h, ".runs/r1/*.stdin.json")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

func TestExitCodeAndShapedOutput(t *testing.T) {
	h := home(t)
	script(t, h, "fail", "import sys\nprint('\\x1b[31mred\\x1b[0m')\nsys.exit(3)\n")
	resp := call(t, `{"name":"fail"}`)
	if !strings.HasPrefix(resp.Text, "red\nexit_code: 3\ntime: ") || resp.Meta["exit_code"] != float64(3) {
		t.Fatalf("%q %v", resp.Text, resp.Meta)
	}
	script(t, h, "long", "for i in range(20000):\n    print('line', i)\n")
	resp = call(t, `{"name":"long"}`)
	if !strings.Contains(resp.Text, "bytes elided; the full output is in /home/agent/.runs/r1/c1.log") || !strings.Contains(resp.Text, "line 19999") {
		t.Fatalf("long output: %q", resp.Text)
	}
}

func TestRefusals(t *testing.T) {
	h := home(t)
	script(t, h, "ok", "print(1)\n")
	for args, want := range map[string]string{
		`{"name":"Bad"}`:                     "ERROR: name: \"Bad\" is not a script name",
		`{"name":"missing"}`:                 "ERROR: name: script missing has no file at /home/agent/scripts/missing.py",
		`{"name":"ok","arguments":[1]}`:      "ERROR: arguments: must be a JSON object",
		`{"name":"../etc/passwd"}`:           "ERROR: name:",
		`{"name":"ok","arguments":"string"}`: "ERROR: arguments: must be a JSON object",
	} {
		if got := call(t, args).Text; !strings.HasPrefix(got, want) {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

func TestTimeoutIsExit124(t *testing.T) {
	h := home(t)
	script(t, h, "slow", "import time\nprint('started', flush=True)\ntime.sleep(60)\n")
	resp := call(t, `{"name":"slow","timeout_seconds":1}`)
	if resp.Meta["exit_code"] != float64(124) || resp.Meta["timed_out"] != true ||
		!strings.Contains(resp.Text, "[timed out after 1s: the command's process group got SIGTERM]\nexit_code: 124\ntime: ") {
		t.Fatalf("%q %v", resp.Text, resp.Meta)
	}
	// On a loaded machine Python may not print within the second; what it
	// printed before the kill is kept, ahead of the timeout line.
	if strings.Contains(resp.Text, "started") && !strings.HasPrefix(resp.Text, "started\n[timed out") {
		t.Fatalf("output before the kill: %q", resp.Text)
	}
}
