package approvals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"
)

// ErrDuplicateKey is returned for arguments that name one key twice in an
// object. Parsers disagree about which copy wins, so an operator could approve
// one value while the tool acts on the other: such arguments are never
// approvable.
var ErrDuplicateKey = errors.New("approvals: the arguments name a key twice")

// Digest is the canonical digest of a call's arguments: SHA-256 over the JSON
// with object keys sorted, no insignificant white space and strings escaped
// only where JSON requires it. Numbers keep their literal form, so 1 and 1.0
// digest apart: an approval never stretches over a value the operator did not
// see written. Empty arguments digest as {}.
func Digest(args json.RawMessage) (string, error) {
	canon, err := Canonical(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Canonical is the form Digest hashes.
func Canonical(args json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	// The decoder would turn invalid UTF-8 into U+FFFD, so two different
	// calls could share a digest.
	if !utf8.Valid(args) {
		return nil, errors.New("approvals: the arguments are not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := canonicalValue(dec, &buf); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("approvals: the arguments hold more than one JSON value")
	}
	return buf.Bytes(), nil
}

func canonicalValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("approvals: the arguments are not JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonicalObject(dec, buf)
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := canonicalValue(dec, buf); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ]
			buf.WriteByte(']')
			return err
		}
		return fmt.Errorf("approvals: unexpected %q in the arguments", t)
	case string:
		writeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func canonicalObject(dec *json.Decoder, buf *bytes.Buffer) error {
	members := map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("approvals: the arguments are not JSON: %w", err)
		}
		key, _ := tok.(string)
		if _, dup := members[key]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
		}
		var v bytes.Buffer
		if err := canonicalValue(dec, &v); err != nil {
			return err
		}
		members[key] = v.Bytes()
	}
	if _, err := dec.Token(); err != nil { // }
		return fmt.Errorf("approvals: the arguments are not JSON: %w", err)
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k)
		buf.WriteByte(':')
		buf.Write(members[k])
	}
	buf.WriteByte('}')
	return nil
}

// writeString writes s as a JSON string without HTML escaping, so the same
// text always yields the same bytes whatever encoder wrote the call.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
