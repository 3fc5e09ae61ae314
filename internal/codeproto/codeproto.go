// Package codeproto is the wire format between the orchestrator's code tools
// and guilds-code, the helper that runs them inside an agent's sandbox.
//
// The orchestrator encodes a Request as base64 JSON and passes it as the
// helper's only argument; when that encoding is longer than MaxArgBytes it
// writes the JSON through the sandbox file API to a file under RequestDir
// instead and passes "@<path>", which the helper reads and deletes. The
// helper prints one Response as base64 JSON on standard output and exits 0;
// a non-zero exit or an output that does not decode is a failure of the
// helper, never a tool result.
package codeproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// HelperPath is where the sandbox image installs the helper.
const HelperPath = "/usr/local/bin/guilds-code"

// RequestDir holds requests too large for the command line.
const RequestDir = "/run/guilds/requests"

// MaxArgBytes is the longest base64 request passed on the command line.
const MaxArgBytes = 64 << 10

// DefaultResultMaxBytes caps a result's text when the request gives none
// (CODE_RESULT_MAX_BYTES).
const DefaultResultMaxBytes = 8192

// HomeEnv names the environment variable that tells the helper where the
// workspace home is on the filesystem it sees. It is unset in a container
// (the home is /home/agent); the local development driver sets it to the
// directory that stands for /home/agent. Results always show /home/agent.
const HomeEnv = "GUILDS_CODE_HOME"

// Request is one tool call for the helper.
type Request struct {
	Tool    string          `json:"tool"`     // shell, file_read, code_search, ...
	Args    json.RawMessage `json:"args"`     // the model's arguments, already validated against the schema
	RunID   string          `json:"run_id"`   // names /home/agent/.runs/<run id>/
	CallID  string          `json:"call_id"`  // names the shell log /home/agent/.runs/<run id>/<call id>.log
	AgentID string          `json:"agent_id"` // exported to shell as GUILD_AGENT_ID
	Step    int             `json:"step"`     // this call's message seq, for repeat_of

	// MaxBytes caps Response.Text; 0 = DefaultResultMaxBytes.
	MaxBytes int `json:"max_bytes,omitempty"`

	// PriorReads are this run's earlier successful file_read results, so
	// the helper can answer a repeated read with one line (file_read only).
	PriorReads []PriorRead `json:"prior_reads,omitempty"`

	// Env are the agent's granted secrets, exported to the command's
	// environment (shell only; names that the fixed variables take are
	// ignored). A request that carries them is always written as a request
	// file, which the helper deletes, never passed on the command line,
	// where the sandbox's process list would show it.
	Env map[string]string `json:"env,omitempty"`
}

// PriorRead is what an earlier file_read of the run returned.
type PriorRead struct {
	Path        string `json:"path"`         // absolute, links resolved, as the helper reported it
	From        int    `json:"from"`         // first line returned
	To          int    `json:"to"`           // last line returned
	ContentHash string `json:"content_hash"` // SHA-256 (hex) of the whole file at that read
	Step        int    `json:"step"`         // the seq of that earlier result
}

// Response is the helper's answer.
type Response struct {
	// Text is the shaped result the model sees (before the platform
	// pipeline). A tool-level failure is "ERROR: ..." text, not Error.
	Text string `json:"text"`
	// Meta holds the fields the call's metadata records (exit_code, cwd,
	// path, range, content_hash, matches, repository, hits, ...).
	Meta map[string]any `json:"meta,omitempty"`
}

// EncodeRequest returns the base64 form of r.
func EncodeRequest(r Request) (string, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// DecodeRequest reads a request from its JSON (a request file) or its
// base64 form (the command line).
func DecodeRequest(s []byte) (Request, error) {
	var r Request
	raw := s
	if t := strings.TrimSpace(string(s)); !strings.HasPrefix(t, "{") {
		b, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return r, fmt.Errorf("codeproto: request is neither JSON nor base64: %w", err)
		}
		raw = b
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("codeproto: request: %w", err)
	}
	if r.Tool == "" {
		return r, errors.New("codeproto: request names no tool")
	}
	return r, nil
}

// EncodeResponse returns the base64 form of r, as the helper prints it.
func EncodeResponse(r Response) (string, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// DecodeResponse reads the helper's standard output.
func DecodeResponse(out []byte) (Response, error) {
	var r Response
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		return r, fmt.Errorf("codeproto: helper output is not base64: %w", err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("codeproto: helper output: %w", err)
	}
	return r, nil
}
