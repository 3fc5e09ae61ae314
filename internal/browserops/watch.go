package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WatchArg is the helper's first argument when it runs as the dialog
// watcher: a process kept beside the browser, attached to every page, that
// accepts each JavaScript dialog as it opens. A dialog that opens between
// two calls (a timer's alert) would otherwise hold the page, and so every
// later call, until the call's timeout: Chromium tells only the clients
// attached when it opens.
const WatchArg = "--watch-dialogs"

// watchPoll is how often the watcher looks for new pages.
const watchPoll = 300 * time.Millisecond

func (c Config) dialogLogPath() string { return filepath.Join(c.stateDir(), "dialogs.log") }

// ensureWatcher starts the watcher unless one runs (it holds watch.lock).
func (c Config) ensureWatcher() error {
	lock := filepath.Join(c.stateDir(), "watch.lock")
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // G304: the helper's own state folder
	if err != nil {
		return err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	_ = f.Close() // releases the probe's lock, if it took it
	if err != nil {
		return nil // held: a watcher runs
	}
	exe, err := c.self()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, WatchArg, c.Home, c.CDPAddr) //nolint:gosec // G204: the helper itself
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	_ = cmd.Process.Release()
	return nil
}

// WatchDialogs is the watcher's life: it holds watch.lock, attaches to
// every page it finds and accepts their dialogs, writing each to the
// dialog log, until the browser stops answering.
func WatchDialogs(home, cdpAddr string) error {
	c := Config{Home: home, CDPAddr: cdpAddr}.withDefaults()
	f, err := os.OpenFile(filepath.Join(c.stateDir(), "watch.lock"), os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // G304: the helper's own state folder
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another watcher won
	}
	logf, err := os.OpenFile(c.dialogLogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600) //nolint:gosec // G304: as above
	if err != nil {
		return err
	}
	var mu sync.Mutex
	attached := map[string]bool{}
	misses := 0
	ctx := context.Background()
	for {
		var list []target
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.getJSON(lctx, "GET", "/json/list", &list)
		cancel()
		if err != nil {
			if misses++; misses > 20 {
				return fmt.Errorf("the browser stopped answering: %w", err)
			}
		} else {
			misses = 0
		}
		for _, t := range list {
			mu.Lock()
			seen := attached[t.ID]
			if t.Type == "page" && t.WS != "" && !seen {
				attached[t.ID] = true
			}
			mu.Unlock()
			if t.Type != "page" || t.WS == "" || seen {
				continue
			}
			go func(t target) {
				watchPage(ctx, t, logf, &mu)
				mu.Lock()
				delete(attached, t.ID)
				mu.Unlock()
			}(t)
		}
		time.Sleep(watchPoll)
	}
}

// watchPage accepts the page's dialogs until its connection closes.
func watchPage(ctx context.Context, t target, log io.Writer, mu *sync.Mutex) {
	pc, err := dial(ctx, t.WS)
	if err != nil {
		return
	}
	defer pc.close()
	opened := pc.subscribe("Page.javascriptDialogOpening")
	if err := pc.call(ctx, "Page.enable", nil, nil); err != nil {
		return
	}
	for {
		select {
		case <-pc.done:
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
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := pc.call(cctx, "Page.handleJavaScriptDialog", p, nil)
			cancel()
			if err != nil {
				continue // the call's own session answered it
			}
			line, _ := json.Marshal(map[string]string{"type": d.Type, "message": clip(d.Message, 200)})
			mu.Lock()
			_, _ = log.Write(append(line, '\n'))
			mu.Unlock()
		}
	}
}

// dialogsSince reads the dialogs the watcher answered after offset and
// returns them with the new offset.
func (c Config) dialogsSince(offset int64) ([]string, int64) {
	raw, err := os.ReadFile(c.dialogLogPath())
	if err != nil || int64(len(raw)) <= offset {
		return nil, max(offset, int64(len(raw)))
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw[offset:])), "\n") {
		var d struct{ Type, Message string }
		if json.Unmarshal([]byte(line), &d) == nil {
			out = append(out, fmt.Sprintf("%s %q, accepted", d.Type, d.Message))
		}
	}
	return out, int64(len(raw))
}
