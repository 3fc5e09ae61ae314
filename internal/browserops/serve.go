// Package browserops is the inside of guilds-browser: the eight browser
// tools run against the Chromium kept running in the agent's sandbox. Every
// call attaches to the page over CDP (http://127.0.0.1:9222), does its work
// and detaches, leaving the browser and its page as they are; what the next
// call needs of this one (which page, the last snapshot's references) is
// kept in a small state file next to the browser's profile.
package browserops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/browserproto"
)

// CallTimeout bounds one call inside the helper; the orchestrator's exec
// timeout (60 s) is a little longer, so the helper answers first.
const CallTimeout = 55 * time.Second

// The eight tools.
const (
	ToolNavigate   = "browser_navigate"
	ToolSnapshot   = "browser_snapshot"
	ToolClick      = "browser_click"
	ToolType       = "browser_type"
	ToolFill       = "browser_fill"
	ToolScroll     = "browser_scroll"
	ToolScreenshot = "browser_screenshot"
	ToolEval       = "browser_eval"
)

// session is one call attached to the page.
type session struct {
	cfg   Config
	req   browserproto.Request
	c     *conn
	page  target
	state *state
	// frames are the sessions opened with frames of another site,
	// closed with the call.
	frames []*conn
}

// frameConn opens a session with a frame target (another site's process).
func (s *session) frameConn(ctx context.Context, t target) (*conn, error) {
	fc, err := dial(ctx, t.WS)
	if err != nil {
		return nil, err
	}
	s.frames = append(s.frames, fc)
	return fc, nil
}

type handler func(ctx context.Context, s *session, args json.RawMessage) browserproto.Response

var handlers = map[string]handler{
	ToolNavigate:   navigate,
	ToolSnapshot:   snapshot,
	ToolClick:      click,
	ToolType:       typeText,
	ToolFill:       fill,
	ToolScroll:     scroll,
	ToolScreenshot: screenshot,
	ToolEval:       eval,
}

// Serve runs one request and returns its result; a failure of the tool is
// an "ERROR: ..." text.
func Serve(ctx context.Context, cfg Config, req browserproto.Request) (resp browserproto.Response) {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	h, ok := handlers[req.Tool]
	if !ok {
		return browserproto.Errorf("tool: %q is not a browser tool this helper knows", req.Tool)
	}
	max := req.MaxBytes
	if max <= 0 {
		max = browserproto.DefaultResultMaxBytes
	}
	defer func() {
		if p := recover(); p != nil {
			resp = browserproto.Errorf("guilds-browser failed on %s: %v", req.Tool, p)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !strings.HasPrefix(resp.Text, "ERROR") {
			resp = browserproto.Errorf("%s did not finish within %s", req.Tool, CallTimeout)
		}
		resp.Text = capText(resp.Text, max)
	}()
	args := req.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	// Arguments are checked before the browser is touched: bad input is
	// answered without starting anything.
	if v, ok := validators[req.Tool]; ok {
		if msg := v(args); msg != "" {
			return browserproto.Errorf("%s", msg)
		}
	}
	if req.ProxySocket != "" {
		if err := cfg.ensureRelay(ctx, req.ProxySocket); err != nil {
			return browserproto.Errorf("the browser's network relay: %v", err)
		}
	}
	if req.SeparateBrowser {
		if !cfg.alive(ctx) {
			return browserproto.Response{StartBrowser: true}
		}
	} else if err := cfg.ensureBrowser(ctx, req.ProxySocket != ""); err != nil {
		return browserproto.Errorf("%v", err)
	}
	_ = cfg.ensureWatcher() // best effort: dialogs between calls
	st := cfg.loadState()
	page, err := cfg.page(ctx, st.Target)
	if err != nil {
		return browserproto.Errorf("%v", err)
	}
	c, err := dial(ctx, page.WS)
	if err != nil {
		return browserproto.Errorf("%v", err)
	}
	defer c.close()
	if page.ID != st.Target {
		st = &state{Target: page.ID}
	}
	s := &session{cfg: cfg, req: req, c: c, page: page, state: st}
	// A JavaScript dialog blocks the page until it is answered: every one
	// that opens during the call (or was open when it began) is accepted,
	// and the result says what it said.
	between, offset := cfg.dialogsSince(st.DialogLog)
	dialogs := s.answerDialogs(ctx)
	defer func() {
		for _, fc := range s.frames {
			fc.close()
		}
	}()
	resp = h(ctx, s, args)
	during, offset := cfg.dialogsSince(offset)
	s.state.DialogLog = offset
	for _, d := range between {
		resp.Text += "\n(since the last call the page showed a dialog: " + d + ")"
	}
	shown := dialogs.seen()
	for _, d := range during { // the watcher may have answered one the call saw too
		if !slices.Contains(shown, d) {
			shown = append(shown, d)
		}
	}
	for _, d := range shown {
		resp.Text += "\n(the page showed a dialog: " + d + ")"
	}
	if n := len(between) + len(shown); n > 0 {
		if resp.Meta == nil {
			resp.Meta = map[string]any{}
		}
		resp.Meta["dialogs"] = n
	}
	if err := cfg.saveState(s.state); err != nil {
		resp.Text += "\n(note: the browser's state could not be saved: " + err.Error() + ")"
	}
	return resp
}

func (c Config) withDefaults() Config {
	if c.Home == "" {
		c.Home = "/home/agent"
		if h := os.Getenv("GUILDS_CODE_HOME"); h != "" {
			c.Home = h
		}
	}
	if c.CDPAddr == "" {
		c.CDPAddr = browserproto.CDPAddr
		if a := os.Getenv("GUILDS_BROWSER_CDP_ADDR"); a != "" {
			c.CDPAddr = a
		}
	}
	if c.Chromium == "" {
		c.Chromium = "chromium"
	}
	if c.RelayAddr == "" {
		c.RelayAddr = browserproto.RelayAddr
	}
	return c
}

// state is what a call leaves for the next one.
type state struct {
	// Target is the page the tools drive.
	Target string `json:"target"`
	// Loader is the main frame's document (loaderId) of the last
	// snapshot; its references mean nothing in another document.
	Loader string `json:"loader,omitempty"`
	// Refs are the backend node ids the last snapshot named.
	Refs []int64 `json:"refs,omitempty"`
	// Frames are the last snapshot's frames of another site (their own
	// process, their own target): a ref f<k>e<n> names node n of Frames[k-1].
	Frames []frameRefs `json:"frames,omitempty"`
	// DialogLog is how much of the watcher's dialog log was reported.
	DialogLog int64 `json:"dialog_log,omitempty"`
}

// frameRefs is one frame of another site in the last snapshot.
type frameRefs struct {
	Target string  `json:"target"` // its CDP target
	Owner  int64   `json:"owner"`  // the iframe element in the page (backend node id)
	Refs   []int64 `json:"refs"`
}

func (c Config) statePath() string { return filepath.Join(c.stateDir(), "state.json") }

func (c Config) loadState() *state {
	var st state
	if raw, err := os.ReadFile(c.statePath()); err == nil {
		_ = json.Unmarshal(raw, &st)
	}
	return &st
}

func (c Config) saveState(st *state) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.stateDir(), 0o700); err != nil {
		return err
	}
	tmp := c.statePath() + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.statePath())
}

func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n[cut at %d bytes; narrow the page or use browser_eval for the part you need]", max)
	cut := max - len(note)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// clip shortens a name or a value for a result line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// dialogLog is what the dialogs of a call said.
type dialogLog struct {
	mu   sync.Mutex
	list []string
}

func (d *dialogLog) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.list...)
}

// answerDialogs accepts every JavaScript dialog of the page for the rest of
// the call (a prompt with its default text). Enabling the Page domain
// reports a dialog already open.
func (s *session) answerDialogs(ctx context.Context) *dialogLog {
	log := &dialogLog{}
	opened := s.c.subscribe("Page.javascriptDialogOpening")
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.c.done:
				return
			case raw := <-opened:
				var d struct {
					Type          string `json:"type"`
					Message       string `json:"message"`
					DefaultPrompt string `json:"defaultPrompt"`
				}
				_ = json.Unmarshal(raw, &d)
				p := params{"accept": true}
				if d.Type == "prompt" {
					p["promptText"] = d.DefaultPrompt
				}
				_ = s.c.call(ctx, "Page.handleJavaScriptDialog", p, nil)
				log.mu.Lock()
				log.list = append(log.list, fmt.Sprintf("%s %q, accepted", d.Type, clip(d.Message, 200)))
				log.mu.Unlock()
			}
		}
	}()
	_ = s.c.call(ctx, "Page.enable", nil, nil)
	return log
}

// StartBrowser makes sure Chromium answers on CDP, starting it as this
// process's user with its profile under home (browserproto.StartArg: the
// browser's own uid, browserproto.BrowserHome). The folder is the uid's
// alone: the agent's uid cannot read the profile, and the browser's uid
// cannot read the agent's 0600 files.
func StartBrowser(ctx context.Context, home string, proxy bool) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("the browser's home %s: %w", home, err)
	}
	if err := os.Chmod(home, 0o700); err != nil { //nolint:gosec // G302: a directory, its owner needs to enter it
		return fmt.Errorf("the browser's home %s: %w", home, err)
	}
	cfg := Config{Home: home}.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return cfg.ensureBrowser(ctx, proxy)
}
