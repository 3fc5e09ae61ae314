package inputs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Modes of a request: a form whose fields the operator fills, or a link the
// operator opens (the server collects what it needs itself).
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// Form is what a server asks for, as it sent it.
type Form struct {
	Mode    string          `json:"mode"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"requested_schema,omitempty"` // form mode
	URL     string          `json:"url,omitempty"`              // url mode
}

// Actions an answer takes, the three of the MCP elicitation result.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Answer is what goes back to the server.
type Answer struct {
	Action  string
	Content map[string]any // accepted form content; nil otherwise
}

// ErrInvalidAnswer is an answer the server's form does not allow.
var ErrInvalidAnswer = errors.New("the answer does not fit the form")

// ErrBadForm is a form the platform cannot show: a requested schema that is
// not the flat object of primitive fields the MCP specification allows.
var ErrBadForm = errors.New("the server's form cannot be shown")

// field is one property of a requested schema: the flat, primitive fields
// elicitation allows (string, number, integer, boolean, and an array of
// enumerated strings for a multiple choice).
type field struct {
	Type      string            `json:"type"`
	Format    string            `json:"format"`
	Enum      []json.RawMessage `json:"enum"`
	OneOf     []choice          `json:"oneOf"`
	MinLength *int              `json:"minLength"`
	MaxLength *int              `json:"maxLength"`
	Minimum   *float64          `json:"minimum"`
	Maximum   *float64          `json:"maximum"`
	Items     *struct {
		Type  string            `json:"type"`
		Enum  []json.RawMessage `json:"enum"`
		AnyOf []choice          `json:"anyOf"`
	} `json:"items"`
	MinItems *int `json:"minItems"`
	MaxItems *int `json:"maxItems"`
}

type choice struct {
	Const json.RawMessage `json:"const"`
}

type schema struct {
	Type       string           `json:"type"`
	Properties map[string]field `json:"properties"`
	Required   []string         `json:"required"`
}

func parseSchema(raw json.RawMessage) (schema, error) {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || (s.Type != "" && s.Type != "object") {
		return schema{}, fmt.Errorf("%w: its requested schema is not a JSON object schema", ErrBadForm)
	}
	for name, f := range s.Properties {
		switch f.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if f.Items == nil || (len(f.Items.Enum) == 0 && len(f.Items.AnyOf) == 0) {
				return schema{}, fmt.Errorf("%w: field %q is a list without choices", ErrBadForm, name)
			}
		default:
			return schema{}, fmt.Errorf("%w: field %q has type %q", ErrBadForm, name, f.Type)
		}
	}
	return s, nil
}

// CheckForm reports whether a form can be shown to a person.
func CheckForm(f Form) error {
	switch f.Mode {
	case ModeForm:
		_, err := parseSchema(f.Schema)
		return err
	case ModeURL:
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: its link is not an http(s) URL", ErrBadForm)
		}
		return nil
	}
	return fmt.Errorf("%w: mode %q", ErrBadForm, f.Mode)
}

// Check validates an answer to the form: an accepted form's content must
// name only the form's fields, hold every required one, and give each a
// value of its type within its bounds. Declining or cancelling takes no
// content; accepting a link takes none either.
func Check(f Form, a Answer) error {
	switch a.Action {
	case ActionAccept:
	case ActionDecline, ActionCancel:
		if len(a.Content) > 0 {
			return fmt.Errorf("%w: only an accepted form carries content", ErrInvalidAnswer)
		}
		return nil
	default:
		return fmt.Errorf("%w: action is %q, %q or %q", ErrInvalidAnswer, ActionAccept, ActionDecline, ActionCancel)
	}
	if f.Mode == ModeURL {
		if len(a.Content) > 0 {
			return fmt.Errorf("%w: a link takes no content", ErrInvalidAnswer)
		}
		return nil
	}
	s, err := parseSchema(f.Schema)
	if err != nil {
		return err
	}
	var problems []string
	for _, name := range sortedKeys(a.Content) {
		fd, ok := s.Properties[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%q is not a field of the form", name))
			continue
		}
		if p := fd.check(a.Content[name]); p != "" {
			problems = append(problems, fmt.Sprintf("%q %s", name, p))
		}
	}
	for _, name := range s.Required {
		if _, ok := a.Content[name]; !ok {
			problems = append(problems, fmt.Sprintf("%q is required", name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidAnswer, strings.Join(problems, "; "))
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// check says what is wrong with v as the field's value ("" when nothing).
func (f field) check(v any) string {
	switch f.Type {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "number", "integer":
		n, ok := number(v)
		if !ok {
			return "must be a number"
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return "must be a whole number"
		}
		if f.Minimum != nil && n < *f.Minimum {
			return fmt.Sprintf("must be at least %v", *f.Minimum)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return fmt.Sprintf("must be at most %v", *f.Maximum)
		}
		if len(f.Enum) > 0 && !oneOf(v, f.Enum) {
			return "must be one of the choices"
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return "must be text"
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength {
			return fmt.Sprintf("must be at least %d characters", *f.MinLength)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return fmt.Sprintf("must be at most %d characters", *f.MaxLength)
		}
		if choices := consts(f.Enum, f.OneOf); len(choices) > 0 && !oneOf(s, choices) {
			return "must be one of the choices"
		}
		if p := checkFormat(f.Format, s); p != "" {
			return p
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return "must be a list of choices"
		}
		if f.MinItems != nil && len(items) < *f.MinItems {
			return fmt.Sprintf("needs at least %d choices", *f.MinItems)
		}
		if f.MaxItems != nil && len(items) > *f.MaxItems {
			return fmt.Sprintf("takes at most %d choices", *f.MaxItems)
		}
		choices := consts(f.Items.Enum, f.Items.AnyOf)
		for _, it := range items {
			if !oneOf(it, choices) {
				return "holds a value that is not one of the choices"
			}
		}
	}
	return ""
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func consts(enum []json.RawMessage, choices []choice) []json.RawMessage {
	out := slices.Clone(enum)
	for _, c := range choices {
		if len(c.Const) > 0 {
			out = append(out, c.Const)
		}
	}
	return out
}

func oneOf(v any, choices []json.RawMessage) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	for _, c := range choices {
		var cv any
		if json.Unmarshal(c, &cv) != nil {
			continue
		}
		cb, _ := json.Marshal(cv)
		if string(cb) == string(b) {
			return true
		}
	}
	return false
}

func checkFormat(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return "must be an e-mail address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return "must be a URI"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "must be a date (YYYY-MM-DD)"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "must be a date and time (RFC 3339)"
		}
	}
	return ""
}
