// Package helper is the one lane between a tool in the orchestrator and the
// helper binary that serves it inside an agent's sandbox (guilds-code,
// guilds-browser, guilds-script-run).
//
// The orchestrator side (Call) encodes a request as base64 JSON and passes
// it as the helper's last argument; when that encoding is longer than
// MaxArgBytes, or the request carries secrets, it writes the JSON through
// the sandbox file API to a file under RequestDir instead (mode 0600) and
// passes "@<path>": the sandbox's process list shows argv, never that file.
// The helper side (Read, Reply, Serve) reads the argument, deletes a request
// file once read, and prints one response as base64 JSON on standard output
// with exit 0. A non-zero exit, an exec past its timeout, a cut output or an
// answer that does not decode is a failure of the helper, never a tool
// result.
//
// This package runs inside the sandbox too: it imports the standard library
// and package sandbox only.
package helper

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// RequestDir holds request files in the sandbox (a tmpfs, /run/guilds).
const RequestDir = "/run/guilds/requests"

// MaxArgBytes is the longest encoded request passed on the command line.
const MaxArgBytes = 64 << 10

// RequestMode is a request file's permission: the helper, which runs as the
// workspace's user, reads and deletes it; the browser's uid cannot read it.
const RequestMode = 0o600

// Validator is implemented by a request type with rules of its own (a tool
// named); Decode applies them.
type Validator interface {
	Validate() error
}

// Encode returns the base64 JSON form of v, a request or a response.
func Encode(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// Decode reads a request or a response from its JSON (a request file) or
// its base64 JSON (the command line, the helper's output), and checks it
// when T is a Validator.
func Decode[T any](s []byte) (T, error) {
	var v T
	raw := []byte(strings.TrimSpace(string(s)))
	if !strings.HasPrefix(string(raw), "{") {
		b, err := base64.StdEncoding.DecodeString(string(raw))
		if err != nil {
			return v, fmt.Errorf("neither JSON nor base64: %w", err)
		}
		raw = b
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	if c, ok := any(&v).(Validator); ok {
		if err := c.Validate(); err != nil {
			return v, err
		}
	}
	return v, nil
}
