package browserops

import (
	"context"
	"encoding/json"
	"fmt"
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
		t = s.cfg.committed(ctx, t)
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
	_ = s.callOn(ctx, el, scrollIntoViewJS, nil)
	if el.owner != 0 {
		return s.framePoint(ctx, el)
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := el.c.call(ctx, "DOM.getContentQuads", params{"backendNodeId": el.backend}, &q); err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return fail("%s (%s) has no visible box to click (hidden, or of zero size)", el.desc, el.ref)
	}
	p := q.Quads[0]
	x = (p[0] + p[2] + p[4] + p[6]) / 4
	y = (p[1] + p[3] + p[5] + p[7]) / 4
	var hit struct {
		BackendNodeID int64 `json:"backendNodeId"`
	}
	if el.c.call(ctx, "DOM.getNodeForLocation", params{"x": int(x), "y": int(y), "includeUserAgentShadowDOM": true, "ignorePointerEventsNone": false}, &hit) != nil || hit.BackendNodeID == 0 || hit.BackendNodeID == el.backend {
		return x, y, nil
	}
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if el.c.call(ctx, "DOM.resolveNode", params{"backendNodeId": hit.BackendNodeID}, &r) != nil {
		return x, y, nil
	}
	var cover string
	err := el.c.call(ctx, "Runtime.callFunctionOn", params{"objectId": el.objectID, "returnByValue": true,
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

// framePoint is clickPoint for an element in a frame of another site: its
// middle in the frame's own coordinates (where its document hit-tests it)
// plus where the frame's content box sits in the page.
func (s *session) framePoint(ctx context.Context, el *element) (x, y float64, bad *browserproto.Response) {
	fail := func(format string, a ...any) (float64, float64, *browserproto.Response) {
		r := browserproto.Errorf(format, a...)
		return 0, 0, &r
	}
	// The frame itself may be out of the page's view: bring it in first.
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := s.c.call(ctx, "DOM.resolveNode", params{"backendNodeId": el.owner}, &r); err != nil {
		return fail("%s (%s) is in a frame that is no longer on the page; take a fresh browser_snapshot", el.desc, el.ref)
	}
	_ = s.callOn(ctx, &element{objectID: r.Object.ObjectID, c: s.c}, scrollIntoViewJS, nil)
	var p struct {
		X, Y  float64
		Cover string
		None  bool
	}
	if err := s.callOn(ctx, el, framePointJS, &p); err != nil {
		return fail("click %s: %v", el.ref, err)
	}
	if p.None {
		return fail("%s (%s) has no visible box to click (hidden, or of zero size)", el.desc, el.ref)
	}
	if p.Cover != "" {
		return fail("%s (%s) is covered by %s where it would be clicked; close or scroll that away (take a fresh browser_snapshot to see it)", el.desc, el.ref, p.Cover)
	}
	var oq struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := s.c.call(ctx, "DOM.getContentQuads", params{"backendNodeId": el.owner}, &oq); err != nil || len(oq.Quads) == 0 || len(oq.Quads[0]) < 8 {
		return fail("%s (%s) is in a frame that has no visible box", el.desc, el.ref)
	}
	return oq.Quads[0][0] + p.X, oq.Quads[0][1] + p.Y, nil
}

// framePointJS returns the element's middle in its frame and what covers
// it there, if anything.
const framePointJS = `function() {
  const r = this.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return {none: true};
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  let cover = '';
  if (hit && hit !== this && !this.contains(hit) && !(hit.tagName === 'LABEL' && hit.control === this)) {
    cover = hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '');
  }
  return {x, y, cover};
}`

// scrollIntoViewJS scrolls an element to the middle of the view when it is
// not in it, then waits a frame (at most 100 ms: a hidden frame draws none).
const scrollIntoViewJS = `function() {
  const r = this.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  return new Promise((ok) => { requestAnimationFrame(() => ok()); setTimeout(ok, 100); });
}`

// newTabBound bounds the wait for a new tab to leave about:blank: Chromium
// lists the tab before it commits the link's URL, later on a loaded machine.
const newTabBound = 15 * time.Second

// committed waits until a new tab has left about:blank (the link's URL is
// committed), polling the target list, and returns it as it then is; past
// newTabBound it returns the tab as last seen.
func (c Config) committed(ctx context.Context, t target) target {
	ctx, cancel := context.WithTimeout(ctx, newTabBound)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for t.URL == "" || t.URL == "about:blank" {
		select {
		case <-ctx.Done():
			return t
		case <-tick.C:
		}
		if now, ok := c.targetByID(ctx, t.ID); ok {
			t = now
		}
	}
	return t
}
