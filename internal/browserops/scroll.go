package browserops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/guilds/guilds/internal/browserproto"
)

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
