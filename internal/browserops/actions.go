package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
)

// settle is how long an action waits for what it set off (a navigation, a
// dialog) to show before it answers.
const settle = 100 * time.Millisecond

func click(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a refArgs
	_ = json.Unmarshal(raw, &a)
	el, bad := s.resolve(ctx, a.Ref)
	if bad != nil {
		return *bad
	}
	x, y, bad := s.clickPoint(ctx, el)
	if bad != nil {
		return *bad
	}
	before := s.cfg.pageIDs(ctx)
	w := s.watch(ctx)
	done := make(chan error, 1)
	go func() {
		for _, ev := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			p := params{"type": ev, "x": x, "y": y, "button": "left", "clickCount": 1}
			if ev == "mouseMoved" {
				p["button"] = "none"
			}
			if err := s.c.call(ctx, "Input.dispatchMouseEvent", p, nil); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := w.wait(ctx, done); err != nil {
		return browserproto.Errorf("click %s: %v", el.ref, err)
	}
	text := fmt.Sprintf("clicked %s (%s)", el.desc, el.ref) + w.report(ctx, s)
	meta := w.meta()
	if t, ok := s.cfg.newPage(ctx, before); ok {
		// A link that opens a new tab: the tools follow it, as a person would.
		s.state.Target, s.state.Loader, s.state.Refs = t.ID, "", nil
		text += fmt.Sprintf("; it opened a new tab, %s, which the browser tools now drive (take a browser_snapshot of it)", t.URL)
		meta["new_tab"] = true
	}
	return browserproto.Response{Text: text, Meta: meta}
}

// clickPoint scrolls the element into view and returns the middle of its
// box, refusing when something else would take the click there.
func (s *session) clickPoint(ctx context.Context, el *element) (x, y float64, bad *browserproto.Response) {
	fail := func(format string, a ...any) (float64, float64, *browserproto.Response) {
		r := browserproto.Errorf(format, a...)
		return 0, 0, &r
	}
	// Scrolled where it is needed only, then one frame for the scroll to
	// reach hit testing.
	_ = s.callOn(ctx, el, `function() {
  const r = this.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  return new Promise((ok) => requestAnimationFrame(() => ok()));
}`, nil)
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := s.c.call(ctx, "DOM.getContentQuads", params{"backendNodeId": el.backend}, &q); err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return fail("%s (%s) has no visible box to click (hidden, or of zero size)", el.desc, el.ref)
	}
	p := q.Quads[0]
	x = (p[0] + p[2] + p[4] + p[6]) / 4
	y = (p[1] + p[3] + p[5] + p[7]) / 4
	var hit struct {
		BackendNodeID int64 `json:"backendNodeId"`
	}
	if s.c.call(ctx, "DOM.getNodeForLocation", params{"x": int(x), "y": int(y), "includeUserAgentShadowDOM": true, "ignorePointerEventsNone": false}, &hit) != nil || hit.BackendNodeID == 0 || hit.BackendNodeID == el.backend {
		return x, y, nil
	}
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if s.c.call(ctx, "DOM.resolveNode", params{"backendNodeId": hit.BackendNodeID}, &r) != nil {
		return x, y, nil
	}
	var cover string
	err := s.c.call(ctx, "Runtime.callFunctionOn", params{"objectId": el.objectID, "returnByValue": true,
		"functionDeclaration": coverJS, "arguments": []map[string]any{{"objectId": r.Object.ObjectID}}}, &evalResultInto{&cover})
	if err != nil || cover == "" {
		return x, y, nil
	}
	return fail("%s (%s) is covered by %s where it would be clicked; close or scroll that away (take a fresh browser_snapshot to see it)", el.desc, el.ref, cover)
}

// coverJS returns "" when the hit element is the target or inside it (or
// in another document: no judgement then), else a short description of it.
const coverJS = `function(hit) {
  if (!hit || hit === this || this.contains(hit) || hit.contains(this) && hit.tagName === 'LABEL' || hit.ownerDocument !== this.ownerDocument) return '';
  if (hit.tagName === 'LABEL' && hit.control === this) return '';
  let d = hit.tagName.toLowerCase();
  if (hit.id) d += '#' + hit.id; else if (typeof hit.className === 'string' && hit.className.trim()) d += '.' + hit.className.trim().split(/\s+/)[0];
  const t = (hit.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 40);
  return t ? d + ' "' + t + '"' : d;
}`

// evalResultInto decodes a Runtime result's value into a Go value.
type evalResultInto struct{ out any }

func (e *evalResultInto) UnmarshalJSON(b []byte) error {
	var r evalResult
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("%s", r.Exception.message())
	}
	return r.decode(e.out)
}

func typeText(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a refArgs
	_ = json.Unmarshal(raw, &a)
	el, bad := s.resolve(ctx, a.Ref)
	if bad != nil {
		return *bad
	}
	if err := s.c.call(ctx, "DOM.focus", params{"backendNodeId": el.backend}, nil); err != nil {
		return browserproto.Errorf("%s (%s) cannot take the keyboard focus: %v", el.desc, el.ref, err)
	}
	w := s.watch(ctx)
	done := make(chan error, 1)
	go func() { done <- s.keys(ctx, a.Text) }()
	if err := w.wait(ctx, done); err != nil {
		return browserproto.Errorf("type into %s: %v", el.ref, err)
	}
	text := fmt.Sprintf("typed %d characters into %s (%s)", len([]rune(a.Text)), el.desc, el.ref)
	var v string
	if s.callOn(ctx, el, "function() { return 'value' in this && typeof this.value === 'string' ? this.value : (this.isContentEditable ? this.innerText : '') }", &v) == nil && v != "" && !w.navigated {
		text += fmt.Sprintf("; its value is now %q", clip(v, 200))
	}
	return browserproto.Response{Text: text + w.report(ctx, s), Meta: w.meta()}
}

// keys sends text as key presses; a newline is Enter and a tab is Tab.
func (s *session) keys(ctx context.Context, text string) error {
	for _, r := range text {
		var down params
		switch r {
		case '\n', '\r':
			down = params{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r", "unmodifiedText": "\r"}
		case '\t':
			down = params{"type": "keyDown", "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9}
		default:
			down = params{"type": "keyDown", "key": string(r), "text": string(r), "unmodifiedText": string(r)}
		}
		if err := s.c.call(ctx, "Input.dispatchKeyEvent", down, nil); err != nil {
			return err
		}
		up := params{"type": "keyUp", "key": down["key"]}
		if c, ok := down["code"]; ok {
			up["code"], up["windowsVirtualKeyCode"] = c, down["windowsVirtualKeyCode"]
		}
		if err := s.c.call(ctx, "Input.dispatchKeyEvent", up, nil); err != nil {
			return err
		}
	}
	return nil
}

func fill(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a refArgs
	_ = json.Unmarshal(raw, &a)
	el, bad := s.resolve(ctx, a.Ref)
	if bad != nil {
		return *bad
	}
	var res struct {
		Error string `json:"error"`
		Value string `json:"value"`
	}
	if err := s.callOn(ctx, el, fillJS, &res, a.Value); err != nil {
		return browserproto.Errorf("fill %s: %v", el.ref, err)
	}
	if res.Error != "" {
		return browserproto.Errorf("%s (%s) %s", el.desc, el.ref, res.Error)
	}
	return browserproto.Response{Text: fmt.Sprintf("filled %s (%s); its value is now %q", el.desc, el.ref, clip(res.Value, 200))}
}

// fillJS sets a field's value the way a person's edit would end: the
// native setter (so frameworks see it), then input and change events.
const fillJS = `function(value) {
  const fire = () => { this.dispatchEvent(new Event('input', {bubbles: true})); this.dispatchEvent(new Event('change', {bubbles: true})); };
  const tag = this.tagName;
  if (this.disabled) return {error: 'is disabled'};
  if (this.readOnly) return {error: 'is read-only'};
  if (tag === 'SELECT') {
    const want = String(value).trim().toLowerCase();
    const opt = [...this.options].find(o => o.value === value) || [...this.options].find(o => o.label.trim().toLowerCase() === want || o.text.trim().toLowerCase() === want);
    if (!opt) return {error: 'has no option ' + JSON.stringify(value) + '; its options are ' + [...this.options].map(o => JSON.stringify(o.label)).join(', ')};
    this.value = opt.value; fire();
    return {value: opt.label};
  }
  if (tag === 'INPUT' && (this.type === 'checkbox' || this.type === 'radio')) {
    const on = /^(true|on|yes|1|checked)$/i.test(String(value).trim());
    const off = /^(false|off|no|0|unchecked)?$/i.test(String(value).trim());
    if (!on && !off) return {error: 'is a ' + this.type + ': fill it with true or false, or click it'};
    if (this.checked !== on) this.click();
    return {value: String(this.checked)};
  }
  if (tag === 'INPUT' && ['button', 'submit', 'reset', 'image', 'file'].includes(this.type)) return {error: 'is a ' + this.type + ' input, not a field to fill; click it instead'};
  if (tag === 'INPUT' || tag === 'TEXTAREA') {
    this.focus();
    const proto = tag === 'INPUT' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(this, value);
    fire();
    return {value: this.value};
  }
  if (this.isContentEditable) { this.focus(); this.textContent = value; fire(); return {value: this.innerText}; }
  return {error: 'is not a field that takes a value (input, textarea, select or an editable region); click it or type into it instead'};
}`

func scroll(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a scrollArgs
	_ = json.Unmarshal(raw, &a)
	var res struct {
		What   string  `json:"what"`
		Before float64 `json:"before"`
		After  float64 `json:"after"`
		Max    float64 `json:"max"`
		Note   string  `json:"note"`
	}
	if a.Ref != "" {
		el, bad := s.resolve(ctx, a.Ref)
		if bad != nil {
			return *bad
		}
		if err := s.callOn(ctx, el, scrollJS, &res, a.Direction); err != nil {
			return browserproto.Errorf("scroll: %v", err)
		}
		if res.Note != "" {
			res.Note = fmt.Sprintf("%s (%s) %s", el.desc, el.ref, res.Note)
		}
	} else {
		var r evalResult
		if err := s.c.call(ctx, "Runtime.evaluate", params{"expression": "(" + scrollJS + ").call(null, " + jsString(a.Direction) + ")",
			"returnByValue": true, "awaitPromise": true}, &r); err != nil {
			return browserproto.Errorf("scroll: %v", err)
		}
		if r.Exception != nil {
			return browserproto.Errorf("scroll: %s", r.Exception.message())
		}
		_ = r.decode(&res)
	}
	axis := "y"
	if a.Direction == "left" || a.Direction == "right" {
		axis = "x"
	}
	text := fmt.Sprintf("scrolled %s %s: %s %d → %d of %d", res.What, a.Direction, axis, int(res.Before), int(res.After), int(res.Max))
	if res.Before == res.After {
		text = fmt.Sprintf("%s is already as far %s as it goes (%s %d of %d)", res.What, a.Direction, axis, int(res.After), int(res.Max))
	}
	if res.Note != "" {
		text = res.Note + "; " + text
	}
	return browserproto.Response{Text: text, Meta: map[string]any{"target": res.What, "position": int(res.After)}}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// scrollJS moves one viewport of the panel: the element's nearest
// scrollable ancestor (this), or without one the largest visible overflow
// panel that can move that way, or else the window.
const scrollJS = `function(dir) {
  const vertical = dir === 'up' || dir === 'down', sign = (dir === 'up' || dir === 'left') ? -1 : 1;
  const can = (e) => {
    const s = getComputedStyle(e), ov = vertical ? s.overflowY : s.overflowX;
    return /(auto|scroll|overlay)/.test(ov) && (vertical ? e.scrollHeight > e.clientHeight + 1 : e.scrollWidth > e.clientWidth + 1);
  };
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width >= 1 && r.height >= 1 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth && getComputedStyle(e).visibility !== 'hidden'; };
  const name = (e) => { let d = e.tagName.toLowerCase(); if (e.id) d += '#' + e.id; else if (e.getAttribute('aria-label')) d += ' "' + e.getAttribute('aria-label') + '"'; else if (typeof e.className === 'string' && e.className.trim()) d += '.' + e.className.trim().split(/\s+/)[0]; return 'the panel ' + d; };
  let panel = null, note = '';
  if (this && this.nodeType === 1) {
    for (let e = this; e && e !== document.body && e !== document.documentElement; e = e.parentElement) if (can(e)) { panel = e; break; }
    if (!panel) note = 'is in no panel that scrolls ' + dir + ', so the window moved';
  } else {
    let area = 0;
    for (const e of document.querySelectorAll('body *')) {
      if (vertical ? e.scrollHeight <= e.clientHeight + 1 : e.scrollWidth <= e.clientWidth + 1) continue;
      if (!can(e) || !shown(e)) continue;
      const r = e.getBoundingClientRect();
      if (r.width * r.height > area) { area = r.width * r.height; panel = e; }
    }
  }
  if (panel) {
    const before = vertical ? panel.scrollTop : panel.scrollLeft;
    const step = vertical ? panel.clientHeight : panel.clientWidth;
    panel.scrollBy({top: vertical ? sign * step : 0, left: vertical ? 0 : sign * step, behavior: 'instant'});
    const after = vertical ? panel.scrollTop : panel.scrollLeft;
    const max = vertical ? panel.scrollHeight - panel.clientHeight : panel.scrollWidth - panel.clientWidth;
    return {what: name(panel), before, after, max, note};
  }
  const se = document.scrollingElement || document.documentElement;
  const before = vertical ? scrollY : scrollX;
  scrollBy({top: vertical ? sign * innerHeight : 0, left: vertical ? 0 : sign * innerWidth, behavior: 'instant'});
  const after = vertical ? scrollY : scrollX;
  const max = vertical ? se.scrollHeight - innerHeight : se.scrollWidth - innerWidth;
  return {what: 'the window', before, after, max: Math.max(max, 0), note};
}`

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
