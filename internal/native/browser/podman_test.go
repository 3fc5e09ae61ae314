package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/browserproxy"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/native/browser"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// The browser tools on the real sandbox image, on the engine at DOCKER_HOST
// (Podman in CI: scripts/podman-up.sh, then make sandbox-image); skipped
// without them, failed when CI is set. The sandbox has no network: Chromium
// reaches the fixture only through the proxy's socket.

// hostAddress is an address of this host that a sandbox can be sent to
// through the proxy: not loopback, which Chromium keeps for the sandbox's
// own.
func hostAddress(t *testing.T) string {
	t.Helper()
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String()
			}
		}
	}
	dockertest.Unavailable(t, "this host has no non-loopback IPv4 address for the fixture")
	return ""
}

type browserRun struct {
	t     *testing.T
	reg   *tools.Registry
	mgr   *workspaces.Manager
	agent string
}

func (r *browserRun) call(tool string, args any) string {
	r.t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return r.reg.Invoke(ctx, tools.Call{Name: tool, Args: raw, AgentID: r.agent, RunID: "run-1"})
}

func (r *browserRun) ok(tool string, args any) string {
	r.t.Helper()
	out := r.call(tool, args)
	if strings.HasPrefix(out, "ERROR") {
		r.t.Fatalf("%s: %s", tool, out)
	}
	return out
}

var refRe = regexp.MustCompile(`\[ref=(e[0-9]+)\]`)

func refOf(t *testing.T, snap, part string) string {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		if m := refRe.FindStringSubmatch(line); m != nil && strings.Contains(line, part) {
			return m[1]
		}
	}
	t.Fatalf("no ref for %q in:\n%s", part, snap)
	return ""
}

func TestBrowserToolsInTheSandboxImageThroughTheProxy(t *testing.T) {
	d, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	ln, err := net.Listen("tcp", net.JoinHostPort(hostAddress(t), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir("../../browserops/testdata")))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	// The fixture's address may be private on this host: allowed here,
	// while metadata stays refused.
	proxy, err := browserproxy.New(browserproxy.Options{Dir: t.TempDir(), Policy: mcpoauth.Policy{AllowLoopback: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxy.Close() }()
	mgr := workspaces.New(d, workspaces.Options{Image: image, Binds: proxy.Binds})
	agent := "agent-" + uuid.NewString()
	t.Cleanup(func() {
		ctx := context.Background()
		_ = mgr.Close(ctx)
		_ = d.RemoveVolume(ctx, workspaces.HomeVolume(agent))
	})
	reg := tools.NewRegistry()
	// As the worker runs them: Chromium as its own uid.
	browser.Register(reg, browser.Deps{Workspace: mgr, Proxy: proxy, BrowserUser: func() string { return sandbox.BrowserUser }})
	r := &browserRun{t: t, reg: reg, mgr: mgr, agent: agent}

	nav := r.ok(browser.ToolNavigate, map[string]any{"url": srv.URL + "/form.html"})
	if !strings.Contains(nav, "(HTTP 200)") {
		t.Fatalf("navigate: %s", nav)
	}
	snap := r.ok(browser.ToolSnapshot, nil)
	r.ok(browser.ToolFill, map[string]any{"ref": refOf(t, snap, `textbox "Name"`), "value": "Ada"})
	r.ok(browser.ToolType, map[string]any{"ref": refOf(t, snap, `textbox "Email"`), "text": "ada@example.com"})
	r.ok(browser.ToolClick, map[string]any{"ref": refOf(t, snap, `button "Create account"`)})
	if got := r.ok(browser.ToolEval, map[string]any{"script": "return document.getElementById('out').textContent"}); !strings.Contains(got, "Welcome Ada") {
		t.Errorf("eval after the click: %s", got)
	}
	r.ok(browser.ToolNavigate, map[string]any{"url": srv.URL + "/panel.html"})
	if got := r.ok(browser.ToolScroll, map[string]any{"direction": "down"}); !strings.Contains(got, "the panel div#list down") {
		t.Errorf("scroll: %s", got)
	}
	if got := r.ok(browser.ToolScreenshot, nil); !strings.Contains(got, "1280×720 JPEG") {
		t.Errorf("screenshot: %s", got)
	}
	f, err := mgr.CopyFrom(context.Background(), agent, browserproto.ScreenshotPath)
	if err != nil {
		t.Fatal(err)
	}
	if img, err := jpeg.Decode(bytes.NewReader(f.Content)); err != nil || img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 720 {
		t.Errorf("the screenshot in the sandbox: %v %v", err, img)
	}
	if got := r.call(browser.ToolNavigate, map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}); !strings.Contains(got, "refused by the platform's outbound address policy") {
		t.Errorf("metadata through the whole path: %s", got)
	}
	// What a call costs from the orchestrator (exec into the sandbox
	// included), logged, never asserted.
	r.ok(browser.ToolNavigate, map[string]any{"url": srv.URL + "/catalog.html"})
	var snaps, clicks []time.Duration
	for range 15 {
		start := time.Now()
		snap := r.ok(browser.ToolSnapshot, nil)
		snaps = append(snaps, time.Since(start))
		start = time.Now()
		r.ok(browser.ToolClick, map[string]any{"ref": refOf(t, snap, `button "Save Aurora 1 for later"`)})
		clicks = append(clicks, time.Since(start))
	}
	p50 := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	t.Logf("p50 through the sandbox on catalog.html: browser_snapshot %s, browser_click %s",
		p50(snaps).Round(time.Millisecond), p50(clicks).Round(time.Millisecond))

	// The browser lives across calls; the sandbox itself has loopback only.
	res, err := mgr.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "ls /sys/class/net; pgrep -c chromium >/dev/null && echo browser running"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "lo\nbrowser running\n" {
		t.Errorf("inside the sandbox: %q %s", got, res.Stderr)
	}
}

// On the real image, Chromium runs as the browser's uid, not the agent's,
// and that uid cannot read the agent's token and request files (0600,
// owned by the agent).
func TestChromiumRunsAsAUserThatCannotReadTheAgentsFiles(t *testing.T) {
	d, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	mgr := workspaces.New(d, workspaces.Options{Image: image})
	agent := "agent-" + uuid.NewString()
	ctx := context.Background()
	t.Cleanup(func() {
		_ = mgr.Close(ctx)
		_ = d.RemoveVolume(ctx, workspaces.HomeVolume(agent))
	})
	reg := tools.NewRegistry()
	browser.Register(reg, browser.Deps{Workspace: mgr, BrowserUser: func() string { return sandbox.BrowserUser }})
	r := &browserRun{t: t, reg: reg, mgr: mgr, agent: agent}
	r.ok(browser.ToolSnapshot, nil)

	secretFiles := []string{"/run/guilds/git-tokens.json", "/run/guilds/requests/pending.json"}
	for _, p := range secretFiles {
		if err := mgr.CopyTo(ctx, agent, p, []byte(`{"token":"ghs_not_for_the_browser"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(user, script string, args ...string) sandbox.ExecResult {
		t.Helper()
		res, err := mgr.Exec(ctx, agent, sandbox.ExecRequest{User: user, Dir: "/", Cmd: append([]string{"sh", "-c", script, "sh"}, args...)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := exec("", `for p in $(pgrep chrom); do stat -c %u /proc/$p; done | sort -u; id -u; stat -c '%a %u' "$@"`, secretFiles...)
	if got := string(res.Stdout); got != "1001\n1000\n600 1000\n600 1000\n" {
		t.Fatalf("browser uids, the agent's uid, the files' modes and owners: %q %s", got, res.Stderr)
	}
	res = exec(sandbox.BrowserUser, `for f in "$@"; do cat "$f" && echo READ; done; ls /tmp/guilds-browser >/dev/null && echo own-home`, secretFiles...)
	if out := string(res.Stdout); strings.Contains(out, "READ") || strings.Contains(out, "ghs_") || !strings.Contains(out, "own-home") ||
		strings.Count(string(res.Stderr), "Permission denied") != len(secretFiles) {
		t.Fatalf("as the browser's uid: %q %q", out, res.Stderr)
	}
	// The agent cannot read the browser's profile either.
	if res := exec("", `ls /tmp/guilds-browser 2>&1 || true`); !strings.Contains(string(res.Stdout), "Permission denied") {
		t.Errorf("the agent reads the browser's home: %q", res.Stdout)
	}
}
