package browserops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Config says where the helper finds and keeps the browser. The zero value
// (after withDefaults) is the sandbox's: Chromium from the image, debugging
// on 127.0.0.1:9222, its profile under /home/agent/.cache/chromium.
type Config struct {
	// Home stands for /home/agent (GUILDS_CODE_HOME under the local driver).
	Home string
	// CDPAddr is the remote debugging address; empty = browserproto.CDPAddr.
	CDPAddr string
	// Chromium is the browser binary; empty = "chromium".
	Chromium string
	// RelayAddr is where the proxy relay listens inside the sandbox.
	RelayAddr string
	// ExtraFlags are added to Chromium's command line (tests).
	ExtraFlags []string
	// Self is guilds-browser, started again as the relay and the dialog
	// watcher; empty = this executable.
	Self string
}

func (c Config) self() (string, error) {
	if c.Self != "" {
		return c.Self, nil
	}
	return os.Executable()
}

// Viewport is the browser window's size; screenshots have this size.
const (
	ViewportWidth  = 1280
	ViewportHeight = 720
)

// startWait bounds waiting for a fresh Chromium to answer on CDP.
const startWait = 30 * time.Second

func (c Config) stateDir() string   { return filepath.Join(c.Home, ".cache", "guilds-browser") }
func (c Config) profileDir() string { return filepath.Join(c.Home, ".cache", "chromium") }

// flags are Chromium's in a container: no sandbox of its own (the container
// is it, and it has no capabilities to build one), headless, nothing that
// phones home, /dev/shm avoided (64 MB in a container).
func (c Config) flags(proxy bool) []string {
	host, port, _ := net.SplitHostPort(c.CDPAddr)
	f := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-breakpad", "--disable-crash-reporter", "--mute-audio",
		// The profile lives on the agent's home volume: keep its cache small.
		"--disk-cache-size=52428800",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--remote-debugging-address=" + host, "--remote-debugging-port=" + port,
		"--user-data-dir=" + c.profileDir(),
		// Larger than the viewport: the window frame counts, and fitViewport
		// sizes it down (the screen is as large as this).
		fmt.Sprintf("--window-size=%d,%d", ViewportWidth+200, ViewportHeight+300),
	}
	if proxy {
		f = append(f, "--proxy-server=http://"+c.RelayAddr)
	}
	f = append(f, c.ExtraFlags...)
	return append(f, "about:blank")
}

// ensureBrowser makes sure Chromium answers on CDP, starting it when it
// does not: in a session of its own, detached, so it outlives this call and
// is ended only with the sandbox. A browser that died is started again on
// the same profile.
func (c Config) ensureBrowser(ctx context.Context, proxy bool) error {
	if c.alive(ctx) {
		return nil
	}
	if err := os.MkdirAll(c.stateDir(), 0o700); err != nil {
		return fmt.Errorf("cannot keep the browser's state in %s: %w", c.stateDir(), err)
	}
	unlock, err := lockFile(ctx, filepath.Join(c.stateDir(), "start.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if c.alive(ctx) { // another call started it meanwhile
		return nil
	}
	c.killOld()
	// A profile left by a browser that did not exit keeps its singleton
	// lock; no browser runs now, so it is stale.
	for _, n := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		_ = os.Remove(filepath.Join(c.profileDir(), n))
	}
	logPath := filepath.Join(c.stateDir(), "chromium.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600) //nolint:gosec // G304: the helper's own state folder
	if err != nil {
		return fmt.Errorf("cannot open the browser's log: %w", err)
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.Command(c.Chromium, c.flags(proxy)...) //nolint:gosec // G204: the image's browser
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.Home
	cmd.Env = append(os.Environ(), "HOME="+c.Home)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the browser (%s): %w", c.Chromium, err)
	}
	_ = os.WriteFile(filepath.Join(c.stateDir(), "chromium.pid"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o600)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(startWait)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the browser exited at start (%v)%s", err, tail(logPath))
		case <-deadline.C:
			return fmt.Errorf("the browser did not answer on %s within %s%s", c.CDPAddr, startWait, tail(logPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if c.alive(ctx) {
				// It now belongs to the sandbox: the helper exits without
				// waiting for it.
				// Best effort here; browser_screenshot insists.
				_ = c.fitViewport(ctx)
				return nil
			}
		}
	}
}

// killOld ends a browser this helper started earlier that no longer
// answers (hung), so a new one can take the port and the profile.
func (c Config) killOld() {
	raw, err := os.ReadFile(filepath.Join(c.stateDir(), "chromium.pid"))
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(raw), &pid); err != nil || pid <= 1 {
		return
	}
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || !strings.Contains(string(comm), "chrom") {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
}

// alive reports whether CDP answers.
func (c Config) alive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var v struct {
		Browser string `json:"Browser"`
	}
	return c.getJSON(ctx, http.MethodGet, "/json/version", &v) == nil && v.Browser != ""
}

func (c Config) getJSON(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.CDPAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := cdpHTTP.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(out)
}

// cdpHTTP talks to Chromium's debugging endpoint only: never a proxy.
var cdpHTTP = &http.Client{Transport: &http.Transport{Proxy: nil}}

// target is a page as /json/list shows it.
type target struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
	WS    string `json:"webSocketDebuggerUrl"`
}

// page returns the page the tools drive: the one the last call used while
// it exists, otherwise the first page, otherwise a new blank one.
func (c Config) page(ctx context.Context, last string) (target, error) {
	var list []target
	if err := c.getJSON(ctx, http.MethodGet, "/json/list", &list); err != nil {
		return target{}, fmt.Errorf("list the browser's pages: %w", err)
	}
	var first *target
	for i := range list {
		t := &list[i]
		if t.Type != "page" || t.WS == "" {
			continue
		}
		if t.ID == last {
			return *t, nil
		}
		if first == nil {
			first = t
		}
	}
	if first != nil {
		return *first, nil
	}
	var t target
	if err := c.getJSON(ctx, http.MethodPut, "/json/new?about:blank", &t); err != nil {
		return target{}, fmt.Errorf("open a page: %w", err)
	}
	return t, nil
}

// lockFile takes an exclusive lock on path until the returned function.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // G304: the helper's own state folder
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail is ": " and the last lines of a log, for a start failure.
func tail(path string) string {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the helper's own log
	if err != nil || len(raw) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 400 {
		s = s[len(s)-400:]
	}
	return ": " + s
}

// fitViewport sizes the window so that the page's viewport is
// ViewportWidth × ViewportHeight: headless Chromium's --window-size counts
// the window's frame too, and a new window takes a while to settle.
func (c Config) fitViewport(ctx context.Context) error {
	p, err := c.page(ctx, "")
	if err != nil {
		return err
	}
	return c.fitPage(ctx, p)
}

func (c Config) fitPage(ctx context.Context, p target) error {
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := c.getJSON(ctx, http.MethodGet, "/json/version", &v); err != nil {
		return fmt.Errorf("the browser's endpoint: %w", err)
	}
	pc, err := dial(ctx, p.WS)
	if err != nil {
		return err
	}
	defer pc.close()
	var bc *conn
	defer func() {
		if bc != nil {
			bc.close()
		}
	}()
	for try := 0; ; try++ {
		var r evalResult
		if err := pc.call(ctx, "Runtime.evaluate", params{"expression": "[innerWidth, innerHeight]", "returnByValue": true}, &r); err != nil {
			return err
		}
		var inner []int
		if err := r.decode(&inner); err != nil || len(inner) != 2 {
			return fmt.Errorf("the page's viewport: %v", err)
		}
		if inner[0] == ViewportWidth && inner[1] == ViewportHeight {
			return nil
		}
		if try == 20 {
			return fmt.Errorf("the viewport stays %dx%d, not %dx%d", inner[0], inner[1], ViewportWidth, ViewportHeight)
		}
		if bc == nil {
			if bc, err = dial(ctx, v.WS); err != nil {
				return err
			}
		}
		var w struct {
			WindowID int `json:"windowId"`
			Bounds   struct {
				Width  int `json:"width"`
				Height int `json:"height"`
			} `json:"bounds"`
		}
		if err := bc.call(ctx, "Browser.getWindowForTarget", params{"targetId": p.ID}, &w); err != nil {
			return err
		}
		if err := bc.call(ctx, "Browser.setWindowBounds", params{"windowId": w.WindowID, "bounds": params{
			"width": w.Bounds.Width + ViewportWidth - inner[0], "height": w.Bounds.Height + ViewportHeight - inner[1]}}, nil); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pageIDs are the pages open now.
func (c Config) pageIDs(ctx context.Context) map[string]bool {
	var list []target
	ids := map[string]bool{}
	if c.getJSON(ctx, http.MethodGet, "/json/list", &list) == nil {
		for _, t := range list {
			if t.Type == "page" {
				ids[t.ID] = true
			}
		}
	}
	return ids
}

// newPage returns a page opened since before was taken (a click on a link
// to a new tab; the click's settle has given it time to be listed).
func (c Config) newPage(ctx context.Context, before map[string]bool) (target, bool) {
	var list []target
	if c.getJSON(ctx, http.MethodGet, "/json/list", &list) != nil {
		return target{}, false
	}
	for _, t := range list {
		if t.Type == "page" && t.WS != "" && !before[t.ID] {
			return t, true
		}
	}
	return target{}, false
}

// targetByID finds a target (a page or a frame) by its id.
func (c Config) targetByID(ctx context.Context, id string) (target, bool) {
	var list []target
	if c.getJSON(ctx, http.MethodGet, "/json/list", &list) != nil {
		return target{}, false
	}
	for _, t := range list {
		if t.ID == id && t.WS != "" {
			return t, true
		}
	}
	return target{}, false
}
