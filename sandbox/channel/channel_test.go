//go:build linux

package channel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// serve starts a server with token on a socket in a temporary folder.
func serve(t *testing.T, token string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() { _ = (&Server{Token: token}).Serve(l) }()
	return sock
}

func run(t *testing.T, c Client, req sandbox.ExecRequest) sandbox.ExecResult {
	t.Helper()
	req, err := req.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	req.Dir = t.TempDir()
	res, err := c.Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("%v: %v", req.Cmd, err)
	}
	return res
}

func TestFrameRoundTripAndLimits(t *testing.T) {
	var b bytes.Buffer
	big := bytes.Repeat([]byte("x"), maxFrame+10)
	if err := writeFrame(&b, kindStdout, big); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for b.Len() > 0 {
		k, p, err := readFrame(&b, nil)
		if err != nil || k != kindStdout {
			t.Fatalf("frame: %q %v", k, err)
		}
		got = append(got, p...)
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("split frames carried %d bytes, want %d", len(got), len(big))
	}
	for name, raw := range map[string][]byte{
		"oversized":    {kindStdout, 0xff, 0xff, 0xff, 0xff},
		"unknown kind": {'Z', 0, 0, 0, 0},
		"short":        {kindStdout, 0, 0, 0, 9, 'a'},
	} {
		if _, _, err := readFrame(bytes.NewReader(raw), nil); !errors.Is(err, ErrFraming) {
			t.Errorf("%s: %v, want ErrFraming", name, err)
		}
	}
}

func TestExecResultExitCodeEnvAndStdin(t *testing.T) {
	tok := NewToken()
	c := Client{Socket: serve(t, tok), Token: tok}
	res := run(t, c, sandbox.ExecRequest{
		Cmd:   []string{"sh", "-c", `read -r line; echo "out:$line:$GREETING:$(pwd)"; echo err >&2; exit 7`},
		Env:   map[string]string{"GREETING": "hi"},
		Stdin: strings.NewReader("fed\n"),
	})
	if res.ExitCode != 7 || !strings.HasPrefix(string(res.Stdout), "out:fed:hi:/") || string(res.Stderr) != "err\n" || res.TimedOut || res.Truncated {
		t.Fatalf("got %+v (%q, %q)", res, res.Stdout, res.Stderr)
	}
	if res := run(t, c, sandbox.ExecRequest{Cmd: []string{"no-such-command-here"}}); res.ExitCode != 127 {
		t.Fatalf("missing command: exit %d, want 127 as through sh", res.ExitCode)
	}
	if res := run(t, c, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "kill -KILL $$"}}); res.ExitCode != 128+9 {
		t.Fatalf("killed command: exit %d, want 137", res.ExitCode)
	}
	// Output closed before the exit: the answer waits for the exit.
	if res := run(t, c, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo early; exec >&- 2>&-; sleep 0.3; exit 6"}}); res.ExitCode != 6 || string(res.Stdout) != "early\n" {
		t.Fatalf("closed output: exit %d, stdout %q", res.ExitCode, res.Stdout)
	}
}

// Output that looks like frames, the handshake's magic and an exit record
// arrives as bytes, byte for byte.
func TestOutputCannotForgeFraming(t *testing.T) {
	tok := NewToken()
	c := Client{Socket: serve(t, tok), Token: tok}
	forged := `X\000\000\000\017{"code":0}` + `O\377\377\377\377` + magic
	res := run(t, c, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `printf '` + forged + `'; printf '` + forged + `' >&2; exit 3`}})
	want := "X\x00\x00\x00\x0f{\"code\":0}O\xff\xff\xff\xff" + magic
	if res.ExitCode != 3 || string(res.Stdout) != want || string(res.Stderr) != want {
		t.Fatalf("got exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func TestOutputCap(t *testing.T) {
	tok := NewToken()
	c := Client{Socket: serve(t, tok), Token: tok}
	res := run(t, c, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "head -c 300000 /dev/zero; echo done >&2"}, MaxOutput: 1000})
	if len(res.Stdout) != 1000 || !res.Truncated || string(res.Stderr) != "done\n" || res.ExitCode != 0 {
		t.Fatalf("got %d bytes, truncated %v, stderr %q, exit %d", len(res.Stdout), res.Truncated, res.Stderr, res.ExitCode)
	}
}

// A command that ignores SIGTERM, with a child in its group, is killed at
// its timeout; the whole group is gone afterwards.
func TestTimeoutKillsTheGroup(t *testing.T) {
	tok := NewToken()
	c := Client{Socket: serve(t, tok), Token: tok}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	req, _ := sandbox.ExecRequest{Cmd: []string{"sh", "-c", `trap '' TERM; sleep 300 & echo "$$ $!" >` + pidFile + `; echo started; wait`}, Timeout: 5 * time.Second, Dir: dir}.Normalize() // wide: the shell must print before it fires, however busy the box
	res, err := c.Exec(context.Background(), req)
	if err != nil || !res.TimedOut || res.ExitCode != sandbox.ExitTimeout || string(res.Stdout) != "started\n" {
		t.Fatalf("got %+v, %v", res, err)
	}
	pids, _ := os.ReadFile(pidFile)
	for _, p := range strings.Fields(string(pids)) {
		if st, err := os.ReadFile("/proc/" + p + "/stat"); err == nil {
			if s, _, ok := statFields(st); ok && s != 'Z' {
				t.Errorf("process %s of the timed-out group still runs (%c)", p, s)
			}
		}
	}
}

// The client giving up (its context) kills the command too.
func TestCancelKillsTheCommand(t *testing.T) {
	tok := NewToken()
	c := Client{Socket: serve(t, tok), Token: tok}
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if b, _ := os.ReadFile(pidFile); len(b) > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	req, _ := sandbox.ExecRequest{Cmd: []string{"sh", "-c", `echo $$ >` + pidFile + `; exec sleep 300`}, Dir: "/"}.Normalize()
	if _, err := c.Exec(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	for {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		if s, _, ok := statFields(st); err != nil || !ok || s == 'Z' {
			return // gone, waited for by a test deadline at worst
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client with the wrong token gets nothing run: it detects that the
// server cannot prove its token, and a client that sends a bad proof
// anyway is refused by the server.
func TestWrongTokenRefused(t *testing.T) {
	tok := NewToken()
	sock := serve(t, tok)
	marker := filepath.Join(t.TempDir(), "ran")
	req, _ := sandbox.ExecRequest{Cmd: []string{"touch", marker}, Dir: "/"}.Normalize()
	_, err := Client{Socket: sock, Token: NewToken()}.Exec(context.Background(), req)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrImpostor) {
		t.Fatalf("wrong token: %v, want ErrUnavailable and ErrImpostor", err)
	}

	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	hello := append([]byte(magic), make([]byte, nonceLen)...)
	if _, err := conn.Write(hello); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, nonceLen+macLen)
	if _, err := io.ReadFull(conn, reply); err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write(make([]byte, macLen)) // a proof without the token
	_ = writeFrame(conn, kindRequest, []byte(`{"cmd":["touch","`+marker+`"],"timeout_ms":1000,"max_output":10}`))
	kind, p, err := readFrame(conn, nil)
	if err != nil || kind != kindExit || !strings.Contains(string(p), refused) {
		t.Fatalf("bad proof: %q %q %v, want a refusal", kind, p, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command ran for a client without the token")
	}
}

func TestParkNeedsPID1(t *testing.T) {
	tok := NewToken()
	if _, err := (Client{Socket: serve(t, tok), Token: tok}).Park(context.Background()); err == nil || !strings.Contains(err.Error(), "PID 1") {
		t.Fatalf("park outside a sandbox: %v, want a refusal", err)
	}
}

func TestParseToken(t *testing.T) {
	if _, err := ParseToken(NewToken() + "\n"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("z", TokenLen)} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}
