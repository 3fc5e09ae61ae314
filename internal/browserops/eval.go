package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/browserproto"
)

// evalResult is the answer of Runtime.evaluate and Runtime.callFunctionOn.
type evalResult struct {
	Result struct {
		Type        string          `json:"type"`
		Subtype     string          `json:"subtype"`
		Value       json.RawMessage `json:"value"`
		Description string          `json:"description"`
	} `json:"result"`
	Exception *exceptionDetails `json:"exceptionDetails"`
}

type exceptionDetails struct {
	Text      string `json:"text"`
	Line      int    `json:"lineNumber"`
	Column    int    `json:"columnNumber"`
	Exception *struct {
		Description string `json:"description"`
		ClassName   string `json:"className"`
		Value       any    `json:"value"`
	} `json:"exception"`
}

// message is the first line of the thrown error ("TypeError: x is not a
// function"), or the exception text.
func (e *exceptionDetails) message() string {
	if e.Exception != nil {
		if d := e.Exception.Description; d != "" {
			first, _, _ := strings.Cut(d, "\n")
			return first
		}
		if e.Exception.Value != nil {
			return fmt.Sprint(e.Exception.Value)
		}
	}
	return strings.TrimPrefix(e.Text, "Uncaught ")
}

func (r evalResult) decode(out any) error {
	if out == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// notSerialisable marks the wrapper's own refusal of a value.
const notSerialisable = "guilds:not-serialisable:"

// evalWrapper runs the script as an async function body and turns its
// value into JSON text in the page, so anything JSON cannot carry is
// refused by name instead of arriving as {}.
const evalWrapper = `(async () => {
%s
})().then((v) => {
  const no = (what) => { throw new TypeError(%q + what); };
  if (v === undefined) return {undef: true};
  if (typeof v === 'function') no('a function');
  if (typeof v === 'symbol') no('a symbol');
  if (typeof v === 'bigint') no('a BigInt (convert it with String(v))');
  if (typeof Node !== 'undefined' && v instanceof Node) no('a DOM ' + v.nodeName.toLowerCase() + ' node (return its properties instead, such as el.textContent or el.href)');
  if (typeof Window !== 'undefined' && v instanceof Window) no('the window object');
  let j;
  try { j = JSON.stringify(v); } catch (e) { no(String(e.message)); }
  if (j === undefined) no('a ' + typeof v);
  return {json: j};
})`

// evalResultMax caps the JSON text returned (the whole result is capped
// again by the helper's limit).
const evalResultMax = 32 << 10

func eval(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a evalArgs
	_ = json.Unmarshal(raw, &a)
	expr := fmt.Sprintf(evalWrapper, a.Script, notSerialisable)
	// Parse first: a syntax error is the script's, before anything runs.
	_ = s.c.call(ctx, "Runtime.enable", nil, nil)
	var comp struct {
		Exception *exceptionDetails `json:"exceptionDetails"`
	}
	if err := s.c.call(ctx, "Runtime.compileScript", params{"expression": expr, "sourceURL": "browser_eval", "persistScript": false}, &comp); err != nil {
		return browserproto.Errorf("browser_eval: %v", err)
	}
	if comp.Exception != nil {
		line := comp.Exception.Line // line 0 is the wrapper's opening
		return browserproto.Errorf("script does not parse: %s (line %d of the script); it runs as the body of an async function, so use return for its value",
			comp.Exception.message(), max(line, 1))
	}
	var r evalResult
	err := s.c.call(ctx, "Runtime.evaluate", params{"expression": expr, "awaitPromise": true, "returnByValue": true,
		"userGesture": true, "replMode": false}, &r)
	if err != nil {
		return browserproto.Errorf("browser_eval: %v", err)
	}
	if r.Exception != nil {
		msg := r.Exception.message()
		if i := strings.Index(msg, notSerialisable); i >= 0 {
			return browserproto.Errorf("the script's value is not JSON-serialisable: %s", msg[i+len(notSerialisable):])
		}
		return browserproto.Errorf("the script threw: %s", msg)
	}
	var v struct {
		Undef bool   `json:"undef"`
		JSON  string `json:"json"`
	}
	if err := r.decode(&v); err != nil {
		return browserproto.Errorf("browser_eval: the value did not come back: %v", err)
	}
	if v.Undef {
		return browserproto.Response{Text: "undefined (the script returned no value; use return)", Meta: map[string]any{"bytes": 0}}
	}
	text := v.JSON
	if len(text) > evalResultMax {
		text = text[:evalResultMax] + fmt.Sprintf("… [value cut at %d bytes of %d]", evalResultMax, len(v.JSON))
	}
	return browserproto.Response{Text: text, Meta: map[string]any{"bytes": len(v.JSON)}}
}
