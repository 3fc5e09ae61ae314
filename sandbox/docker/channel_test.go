package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/channel"
	"github.com/guilds/guilds/sandbox/channel/channeltest"
)

// testServer builds a static guilds-sandboxd, mounted into the busybox test
// image (which carries none) through Options.ChannelServer.
func testServer(t testing.TB) string { return channeltest.ServerBinary(t) }

// channelEngine is engine with the command channel on.
func channelEngine(t testing.TB) *Driver {
	t.Helper()
	plain, _ := engine(t)
	d, err := New(Options{Client: plain.cli, Scope: plain.scope, ChannelDir: t.TempDir(), ChannelServer: testServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func createWithChannel(t *testing.T, d *Driver) string {
	t.Helper()
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: testImage(), AgentID: "chan", User: "1000:1000"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Remove(context.Background(), sb.ID) })
	if !d.HasChannel(sb.ID) {
		t.Fatal("the sandbox came up without its command channel")
	}
	return sb.ID
}

// withoutChannel runs fn with the sandbox's channel set aside, so its
// commands go through the engine's exec.
func withoutChannel(d *Driver, id string, fn func()) {
	c, _ := d.channels.LoadAndDelete(id)
	defer d.channels.Store(id, c)
	fn()
}

// A command through the channel runs as it would through the engine's
// exec: same user and groups, environment, folder, output and exit code.
func TestChannelMatchesExec(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	ctx := context.Background()
	req := sandbox.ExecRequest{
		Cmd: []string{"sh", "-c", `id; pwd; env | grep -v -e '^HOSTNAME=' -e '^_=' -e '^SHLVL=' -e '^PWD=' | sort; ulimit -n; echo err >&2; exit 5`},
		Env: map[string]string{"EXTRA": "one two"}, Dir: "/tmp", Timeout: time.Minute,
	}
	viaChannel, err := d.Exec(ctx, id, req)
	if err != nil {
		t.Fatal(err)
	}
	var viaExec sandbox.ExecResult
	withoutChannel(d, id, func() { viaExec, err = d.Exec(ctx, id, req) })
	if err != nil {
		t.Fatal(err)
	}
	// The keeper's supplementary groups (its own group, as the engine
	// gives a first process) are not an exec's, which has none for a
	// numeric user: id lists them, nothing else differs.
	groups := regexp.MustCompile(` groups=\S+`)
	viaChannel.Stdout = groups.ReplaceAll(viaChannel.Stdout, nil)
	if viaChannel.ExitCode != 5 || string(viaChannel.Stdout) != string(viaExec.Stdout) || string(viaChannel.Stderr) != string(viaExec.Stderr) || viaChannel.ExitCode != viaExec.ExitCode {
		t.Fatalf("channel:\n%s%s(exit %d)\nexec:\n%s%s(exit %d)", viaChannel.Stdout, viaChannel.Stderr, viaChannel.ExitCode,
			viaExec.Stdout, viaExec.Stderr, viaExec.ExitCode)
	}
	if !strings.Contains(string(viaChannel.Stdout), "uid=1000") || !strings.Contains(string(viaChannel.Stdout), "EXTRA=one two") {
		t.Fatalf("unexpected output %s", viaChannel.Stdout)
	}
}

// The token cannot be found from inside: its file is gone, the channel
// folder cannot be listed, the keeper's memory and environment are closed
// to the sandbox's user, and the socket is its owner's alone.
func TestChannelTokenHiddenFromCommands(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	res, err := d.Exec(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `
cat /run/guilds-channel/token && echo TOKEN-READ
ls /run/guilds-channel && echo LISTED
touch /run/guilds-channel/x && echo WROTE
rm -f /run/guilds-channel/sock && echo REMOVED
cat /proc/1/environ >/dev/null && echo ENVIRON-READ
head -c1 /proc/1/mem >/dev/null && echo MEM-READ
env | grep -i token
stat -c '%a' /run/guilds-channel/sock
exit 0`}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	for _, leak := range []string{"TOKEN-READ", "LISTED", "WROTE", "REMOVED", "ENVIRON-READ", "MEM-READ", "TOKEN="} {
		if strings.Contains(strings.ToUpper(out), leak) {
			t.Errorf("%s: %s", leak, out)
		}
	}
	if !strings.Contains(out, "600") {
		t.Errorf("socket mode: %s", out)
	}
	c, _ := d.channel(id)
	if _, err := os.Stat(filepath.Join(filepath.Dir(c.Socket), tokenFile)); !os.IsNotExist(err) {
		t.Errorf("the token file is still there on the host: %v", err)
	}
}

// A client with another token gets nothing run.
func TestChannelWrongTokenRefused(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	c, _ := d.channel(id)
	c.Token = channel.NewToken()
	req, _ := sandbox.ExecRequest{Cmd: []string{"touch", "/tmp/ran"}}.Normalize()
	if _, err := c.Exec(context.Background(), req); !errors.Is(err, channel.ErrUnavailable) {
		t.Fatalf("wrong token: %v", err)
	}
	res, err := d.Exec(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "test -e /tmp/ran && echo RAN; exit 0"}})
	if err != nil || strings.Contains(string(res.Stdout), "RAN") {
		t.Fatalf("a command ran with the wrong token: %v %s", err, res.Stdout)
	}
}

// Timeouts kill the group, output is capped, framing-like output arrives
// intact, stdin is fed, and the file API works, all through the channel.
func TestChannelLimitsAndFiles(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	ctx := context.Background()

	res, err := d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `trap '' TERM; sleep 300 & echo started; wait`}, Timeout: 5 * time.Second}) // wide: the shell must print before it fires
	if err != nil || !res.TimedOut || res.ExitCode != sandbox.ExitTimeout || string(res.Stdout) != "started\n" {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	// The timed-out Exec returns once the killed group is gone (killGroup
	// waits for that), so no live member may be left when it has returned.
	res, err = d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `ps -o stat,comm | grep -v '^Z' | grep -c 'sleep' || true`}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Fatalf("the timed-out group survived: %q live sleep processes %v", res.Stdout, err)
	}

	res, err = d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "head -c 200000 /dev/zero"}, MaxOutput: 777})
	if err != nil || len(res.Stdout) != 777 || !res.Truncated {
		t.Fatalf("cap: %d bytes, truncated %v, %v", len(res.Stdout), res.Truncated, err)
	}

	res, err = d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `printf 'X\000\000\000\002{}GUILDSC1'; exit 9`}})
	if err != nil || res.ExitCode != 9 || string(res.Stdout) != "X\x00\x00\x00\x02{}GUILDSC1" {
		t.Fatalf("framing-like output: %q exit %d %v", res.Stdout, res.ExitCode, err)
	}

	res, err = d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("fed through\n")})
	if err != nil || string(res.Stdout) != "fed through\n" {
		t.Fatalf("stdin: %q %v", res.Stdout, err)
	}

	if err := d.CopyTo(ctx, id, "/run/guilds/req.json", []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := d.CopyFrom(ctx, id, "/run/guilds/req.json")
	if err != nil || string(f.Content) != `{"a":1}` || f.Mode != 0o600 {
		t.Fatalf("file API: %+v %v", f, err)
	}
}

// Park ends background commands through the channel; the thawed sandbox
// answers through it again.
func TestChannelParkUnpark(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	ctx := context.Background()
	if _, err := d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "nohup sleep 300 >/dev/null 2>&1 & touch /tmp/scratch"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Park(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, awake := d.awake.Load(id); !awake {
		t.Error("a sandbox with nothing but its keeper left was frozen")
	}
	if err := d.Unpark(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `ps -o comm 2>/dev/null | grep -c '^sleep' ; ls /tmp | wc -l`}})
	if err != nil || strings.Fields(string(res.Stdout))[0] != "0" || strings.Fields(string(res.Stdout))[1] != "0" {
		t.Fatalf("after park: %q %v", res.Stdout, err)
	}
}

// Without the channel (the socket gone, or an image without the server and
// none mounted) commands take the engine's exec and work as before.
func TestChannelFallback(t *testing.T) {
	d := channelEngine(t)
	id := createWithChannel(t, d)
	c, _ := d.channel(id)
	if err := os.Remove(c.Socket); err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo via-exec; exit 4"}})
	if err != nil || string(res.Stdout) != "via-exec\n" || res.ExitCode != 4 {
		t.Fatalf("fallback: %+v %v", res, err)
	}
	// A link in the socket's place (to a socket of the host) is not dialled.
	other := filepath.Join(t.TempDir(), "other.sock")
	l, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if err := os.Symlink(other, c.Socket); err != nil {
		t.Fatal(err)
	}
	if d.HasChannel(id) {
		t.Fatal("a channel that failed is still used")
	}
	d.channels.Store(id, c)
	res, err = d.Exec(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"echo", "still-exec"}})
	if err != nil || string(res.Stdout) != "still-exec\n" {
		t.Fatalf("fallback past a link: %+v %v", res, err)
	}

	plain, _ := engine(t)
	old, err := New(Options{Client: plain.cli, Scope: plain.scope, ChannelDir: t.TempDir()}) // no server: the busybox image has none
	if err != nil {
		t.Fatal(err)
	}
	sb, err := old.Create(context.Background(), sandbox.Spec{Image: testImage(), AgentID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Remove(context.Background(), sb.ID) })
	if old.HasChannel(sb.ID) {
		t.Fatal("a channel for an image without the server")
	}
	res, err = old.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Cmd: []string{"echo", "old"}})
	if err != nil || string(res.Stdout) != "old\n" {
		t.Fatalf("old image: %+v %v", res, err)
	}
}

// An agent image that carries the server (its guilds.sandboxd label) gets
// the channel with nothing mounted. GUILDS_SANDBOX_IMAGE names the image
// (default guilds-sandbox:latest, from `make sandbox-image`).
func TestChannelFromImageLabel(t *testing.T) {
	plain, cli := engine(t)
	ref := os.Getenv("GUILDS_SANDBOX_IMAGE")
	if ref == "" {
		ref = "guilds-sandbox:latest"
	}
	img, err := cli.ImageInspect(context.Background(), ref)
	if err != nil || img.Config == nil || img.Config.Labels[ServerLabel] == "" {
		t.Skipf("image %s has no %s label (%v): rebuild it with `make sandbox-image`", ref, ServerLabel, err)
	}
	d, err := New(Options{Client: cli, Scope: plain.scope, ChannelDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: ref, AgentID: "label", User: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Remove(context.Background(), sb.ID) })
	if !d.HasChannel(sb.ID) {
		t.Fatal("no channel with the image's server")
	}
	res, err := d.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "id -un; cat /proc/1/comm"}})
	if err != nil || string(res.Stdout) != "agent\nguilds-sandboxd\n" {
		t.Fatalf("got %q %v", res.Stdout, err)
	}
}
