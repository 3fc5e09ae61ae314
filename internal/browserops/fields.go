package browserops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/guilds/guilds/internal/browserproto"
)

func typeText(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a refArgs
	_ = json.Unmarshal(raw, &a)
	el, bad := s.resolve(ctx, a.Ref)
	if bad != nil {
		return *bad
	}
	if err := el.c.call(ctx, "DOM.focus", params{"backendNodeId": el.backend}, nil); err != nil {
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
