// Package codeproto holds the request and the response of guilds-code, the
// helper that runs the code tools inside an agent's sandbox (and of
// guilds-script-run, which shares them). They travel through the helper
// lane, sandbox/helper.
package codeproto

import (
	"encoding/json"
	"errors"
)

// HelperPath is where the sandbox image installs the helper.
const HelperPath = "/usr/local/bin/guilds-code"

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

// Validate is what the helper checks of a request it decodes.
func (r Request) Validate() error {
	if r.Tool == "" {
		return errors.New("request names no tool")
	}
	return nil
}
