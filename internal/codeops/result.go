package codeops

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/codeproto"
)

// Errorf is a tool-level failure: one "ERROR: ..." line that the model
// reads. Callers start the message with the argument it is about.
func Errorf(format string, a ...any) codeproto.Response {
	return codeproto.Response{Text: "ERROR: " + fmt.Sprintf(format, a...)}
}

// fieldErr is a refused argument: the field name, then why.
func fieldErr(field string, err error) codeproto.Response {
	return Errorf("%s: %v", field, err)
}

// CapText is the last guard on a result's size: text over max bytes is cut
// at a character boundary with a line saying so. Operations shape their
// own output to fit; this only catches what they missed.
func CapText(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	const note = "\n[result cut at the %d byte cap]"
	tail := fmt.Sprintf(note, max)
	cut := max - len(tail)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tail
}

// decodeArgs reads a tool's arguments; an argument of the wrong type is
// named by its field.
func decodeArgs(raw json.RawMessage, v any) error {
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("%s: must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	}
	return fmt.Errorf("arguments: %v", err)
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint") || strings.HasPrefix(k, "float"):
		return "a number"
	}
	return "a " + k
}
