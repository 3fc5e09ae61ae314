package inputs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var shipping = Form{Mode: ModeForm, Message: "Where to?", Schema: json.RawMessage(`{
	"type": "object", "required": ["email", "copies"],
	"properties": {
		"email": {"type": "string", "format": "email"},
		"copies": {"type": "integer", "minimum": 1, "maximum": 5},
		"note": {"type": "string", "maxLength": 10},
		"speed": {"type": "string", "enum": ["slow", "fast"]},
		"gift": {"type": "boolean"},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2}
	}}`)}

func TestAnAnswerIsCheckedAgainstTheForm(t *testing.T) {
	ok := map[string]any{"email": "ann@example.com", "copies": 2.0, "speed": "fast", "gift": true, "tags": []any{"a", "b"}}
	if err := Check(shipping, Answer{Action: ActionAccept, Content: ok}); err != nil {
		t.Fatalf("a fitting answer: %v", err)
	}
	for _, c := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"email": "ann@example.com"}, `"copies" is required`},
		{map[string]any{"email": "nope", "copies": 1.0}, `"email" must be an e-mail address`},
		{map[string]any{"email": "a@b.c", "copies": 1.5}, `"copies" must be a whole number`},
		{map[string]any{"email": "a@b.c", "copies": 9.0}, `"copies" must be at most 5`},
		{map[string]any{"email": "a@b.c", "copies": "2"}, `"copies" must be a number`},
		{map[string]any{"email": "a@b.c", "copies": 1.0, "note": "far too long here"}, `"note" must be at most 10 characters`},
		{map[string]any{"email": "a@b.c", "copies": 1.0, "speed": "warp"}, `"speed" must be one of the choices`},
		{map[string]any{"email": "a@b.c", "copies": 1.0, "gift": "yes"}, `"gift" must be true or false`},
		{map[string]any{"email": "a@b.c", "copies": 1.0, "tags": []any{"c"}}, `"tags" holds a value`},
		{map[string]any{"email": "a@b.c", "copies": 1.0, "extra": 1.0}, `"extra" is not a field of the form`},
	} {
		err := Check(shipping, Answer{Action: ActionAccept, Content: c.content})
		if !errors.Is(err, ErrInvalidAnswer) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.content, err, c.want)
		}
	}
	if err := Check(shipping, Answer{Action: ActionDecline}); err != nil {
		t.Fatalf("a decline: %v", err)
	}
	if err := Check(shipping, Answer{Action: ActionDecline, Content: ok}); !errors.Is(err, ErrInvalidAnswer) {
		t.Fatalf("a decline with content: %v", err)
	}
	if err := Check(shipping, Answer{Action: "maybe"}); !errors.Is(err, ErrInvalidAnswer) {
		t.Fatalf("an unknown action: %v", err)
	}
	link := Form{Mode: ModeURL, Message: "Sign in", URL: "https://example.com/auth"}
	if err := Check(link, Answer{Action: ActionAccept}); err != nil {
		t.Fatalf("a link accepted: %v", err)
	}
	if err := Check(link, Answer{Action: ActionAccept, Content: ok}); !errors.Is(err, ErrInvalidAnswer) {
		t.Fatalf("a link with content: %v", err)
	}
}

func TestAFormThePlatformCannotShowIsRefused(t *testing.T) {
	for _, f := range []Form{
		{Mode: ModeForm, Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"object"}}}`)},
		{Mode: ModeForm, Schema: json.RawMessage(`[]`)},
		{Mode: ModeURL, URL: "javascript:alert(1)"},
		{Mode: "voice"},
	} {
		if err := CheckForm(f); !errors.Is(err, ErrBadForm) {
			t.Errorf("%+v: %v, want ErrBadForm", f, err)
		}
	}
}
