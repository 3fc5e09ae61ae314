package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// watcher notices a navigation of the main frame that an action set off
// (the session answers dialogs).
type watcher struct {
	c         *conn
	main      string // the main frame's id
	started   <-chan json.RawMessage
	loaded    <-chan json.RawMessage
	navigated bool
}

func (s *session) watch(ctx context.Context) *watcher {
	w := &watcher{
		started: s.c.subscribe("Page.frameStartedNavigating"),
		loaded:  s.c.subscribe("Page.loadEventFired"),
	}
	_ = s.c.call(ctx, "Page.enable", nil, nil)
	var ft struct {
		FrameTree frameTree `json:"frameTree"`
	}
	_ = s.c.call(ctx, "Page.getFrameTree", nil, &ft)
	w.c, w.main = s.c, ft.FrameTree.Frame.ID
	return w
}

// mainNavigation reports whether a frameStartedNavigating event is a new
// document in the main frame.
func (w *watcher) mainNavigation(raw json.RawMessage) bool {
	var e struct {
		FrameID string `json:"frameId"`
		Type    string `json:"navigationType"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.FrameID == w.main && e.Type != "sameDocument" && e.Type != "historySameDocument"
}

// wait lets the action finish, then waits a moment for a navigation it
// started.
func (w *watcher) wait(ctx context.Context, done <-chan error) error {
	var err error
	finished := false
	for !finished {
		select {
		case err = <-done:
			finished = true
		case e := <-w.started:
			w.navigated = w.navigated || w.mainNavigation(e)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	t := time.NewTimer(settle)
	defer t.Stop()
	for {
		select {
		case e := <-w.started:
			w.navigated = w.navigated || w.mainNavigation(e)
		case <-w.loaded:
			return nil
		case <-t.C:
			if !w.navigated {
				return nil
			}
			// A navigation started: give it until load, within reason.
			t.Reset(10 * time.Second)
			w.navigated = true
			select {
			case <-w.loaded:
				return nil
			case <-t.C:
				return nil
			case <-ctx.Done():
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

func (w *watcher) report(ctx context.Context, s *session) string {
	var b strings.Builder
	if w.navigated {
		var r evalResult
		_ = s.c.call(ctx, "Runtime.evaluate", params{"expression": "[location.href, document.title]", "returnByValue": true}, &r)
		var v []string
		if r.decode(&v) == nil && len(v) == 2 {
			fmt.Fprintf(&b, "; the page is now %s %q (refs of the last snapshot are stale: take a fresh browser_snapshot)", v[0], clip(v[1], 80))
		}
	}
	return b.String()
}

func (w *watcher) meta() map[string]any {
	m := map[string]any{}
	if w.navigated {
		m["navigated"] = true
	}
	return m
}
