package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox/helper"
)

// TestMain lets the test binary stand in for guilds-code when a background
// job re-executes the helper as its supervisor.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == codeops.JobArg {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// sandboxRoot lays out a root like the local driver's (home/agent and
// run/guilds/requests) and points the helper at its home.
func sandboxRoot(t *testing.T) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home/agent")
	for _, d := range []string{home, filepath.Join(root, "run/guilds/requests")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(codeops.SandboxRootEnv, "")
	t.Setenv(codeproto.HomeEnv, home)
	return root, home
}

func request(tool, args string) codeproto.Request {
	return codeproto.Request{Tool: tool, Args: json.RawMessage(args), RunID: "r1", CallID: "c1", AgentID: "a1", Step: 2}
}

// invoke runs the helper with one argument and decodes its answer.
func invoke(t *testing.T, arg string) (codeproto.Response, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{arg}, &stdout, &stderr)
	if code != 0 {
		return codeproto.Response{}, code, stderr.String()
	}
	resp, err := helper.Decode[codeproto.Response](stdout.Bytes())
	if err != nil {
		t.Fatalf("answer: %v (%q)", err, stdout.String())
	}
	return resp, code, stderr.String()
}

func encoded(t *testing.T, r codeproto.Request) string {
	t.Helper()
	s, err := helper.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBase64RequestRoundTrip(t *testing.T) {
	_, home := sandboxRoot(t)
	resp, code, stderr := invoke(t, encoded(t, request("file_write", `{"path":"src/a.txt","content":"one\ntwo\n"}`)))
	if code != 0 || resp.Text != "wrote src/a.txt (2 lines)" || resp.Meta["path"] != "/home/agent/src/a.txt" {
		t.Fatalf("%d %q %v %s", code, resp.Text, resp.Meta, stderr)
	}
	if raw, _ := os.ReadFile(filepath.Join(home, "src/a.txt")); string(raw) != "one\ntwo\n" {
		t.Fatalf("%q", raw)
	}
	resp, _, _ = invoke(t, encoded(t, request("file_read", `{"path":"/home/agent/src/a.txt"}`)))
	if resp.Text != "src/a.txt · lines 1–2 of 2\n1\tone\n2\ttwo" || resp.Meta["lines"] != float64(2) {
		t.Fatalf("%q %v", resp.Text, resp.Meta)
	}
	// The .runs folder of the run exists after any call.
	if _, err := os.Stat(filepath.Join(home, ".runs/r1")); err != nil {
		t.Fatal(err)
	}
}

// TestRequestFileOver64KiB: a request too long for the command line comes
// as a file under /run/guilds/requests/, which the helper deletes.
func TestRequestFileOver64KiB(t *testing.T) {
	root, home := sandboxRoot(t)
	content := strings.Repeat("0123456789abcdef\n", 6000) // ~100 KiB
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	for i, arg := range []string{"@/run/guilds/requests/req1.json", "@" + filepath.Join(root, "run/guilds/requests/req2.json")} {
		name := []string{"req1.json", "req2.json"}[i]
		raw, _ := json.Marshal(request("file_write", string(args)))
		if len(encoded(t, request("file_write", string(args)))) <= helper.MaxArgBytes {
			t.Fatal("the request is not over the command-line limit")
		}
		file := filepath.Join(root, "run/guilds/requests", name)
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		resp, code, stderr := invoke(t, arg)
		if code != 0 || resp.Text != "wrote big.txt (6000 lines)" {
			t.Fatalf("%s: %d %q %s", arg, code, resp.Text, stderr)
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Fatalf("%s: the request file is still there (%v)", arg, err)
		}
		if got, _ := os.ReadFile(filepath.Join(home, "big.txt")); string(got) != content {
			t.Fatal("content differs")
		}
	}
}

func TestHelperFailures(t *testing.T) {
	root, _ := sandboxRoot(t)
	bad := filepath.Join(root, "run/guilds/requests/bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"not base64!":                    "neither JSON nor base64",
		"@/etc/passwd":                   "is not a file directly under /run/guilds/requests",
		"@/run/guilds/requests/../x":     "is not a file directly under",
		"@/run/guilds/requests/missing":  "no such file",
		"@/run/guilds/requests/bad.json": "request",
		encoded(t, codeproto.Request{Args: json.RawMessage(`{}`)}): "names no tool",
	} {
		_, code, stderr := invoke(t, arg)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%.40s: exit %d, stderr %q, want %q", arg, code, stderr, want)
		}
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Error("an undecodable request file was left behind")
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), nil, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage") {
		t.Errorf("no argument: %d %q", code, stderr.String())
	}
}

func TestToolLevelErrorsAreResults(t *testing.T) {
	sandboxRoot(t)
	saved := symbolSearch
	symbolSearch = nil
	defer func() { symbolSearch = saved }()
	handlers["test_panic"] = func(context.Context, *codeops.Env, json.RawMessage) codeproto.Response { panic("boom") }
	defer delete(handlers, "test_panic")

	bad := request("file_read", `{"path":"x"}`)
	bad.RunID = "../escape"
	for _, tc := range []struct {
		req  codeproto.Request
		want string
	}{
		{request("no_such_tool", `{}`), `ERROR: tool: "no_such_tool" is not a code tool this helper knows`},
		{request("code_search", `{"pattern":"x","mode":"symbols"}`), "ERROR: symbol search is not available in this sandbox"},
		{request("file_read", `{"path":"/etc/passwd"}`), "ERROR: path: /etc/passwd is outside /home/agent"},
		{request("test_panic", `{}`), "ERROR: guilds-code failed on test_panic: boom"},
		{bad, `ERROR: run_id "../escape" is not a plain name`},
		{request("shell", `null`), "ERROR: command: is empty"},
	} {
		resp, code, stderr := invoke(t, encoded(t, tc.req))
		if code != 0 || !strings.HasPrefix(resp.Text, tc.want) {
			t.Errorf("%s: %d %q %s, want %q", tc.req.Tool, code, resp.Text, stderr, tc.want)
		}
	}
}

func TestEveryResultIsCapped(t *testing.T) {
	sandboxRoot(t)
	req := request("shell", `{"command":"seq 1 100000"}`)
	req.MaxBytes = 500
	resp, _, _ := invoke(t, encoded(t, req))
	if len(resp.Text) > 500 || !strings.HasSuffix(resp.Text, "\n100000") || resp.Meta["log_path"] != "/home/agent/.runs/r1/c1.log" {
		t.Fatalf("%d bytes %v\n%s", len(resp.Text), resp.Meta, resp.Text)
	}
	req = request("shell", `{"command":"seq 1 100000"}`)
	resp, _, _ = invoke(t, encoded(t, req))
	if len(resp.Text) > codeproto.DefaultResultMaxBytes {
		t.Fatalf("%d bytes", len(resp.Text))
	}
}

func TestBackgroundThroughTheHelper(t *testing.T) {
	sandboxRoot(t)
	resp, _, stderr := invoke(t, encoded(t, request("shell", `{"command":"echo from-the-job","background":true}`)))
	if resp.Meta["background_id"] != "b1" {
		t.Fatalf("%q %s", resp.Text, stderr)
	}
	for range 1000 {
		resp, _, _ = invoke(t, encoded(t, request("shell_status", `{"id":"b1"}`)))
		if resp.Meta["state"] != codeops.StateRunning {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp.Meta["state"] != codeops.StateExited || resp.Meta["exit_code"] != float64(0) || !strings.HasSuffix(resp.Text, "from-the-job") {
		t.Fatalf("%q %v", resp.Text, resp.Meta)
	}
}

func TestEveryToolIsRegistered(t *testing.T) {
	for _, name := range []string{"shell", "shell_status", "file_read", "file_edit", "file_write", "code_search", "code_match"} {
		if handlers[name] == nil {
			t.Errorf("%s has no handler", name)
		}
	}
}
