// Package runproto is what script_run and guilds-script-run, the helper that
// runs a script inside the agent's sandbox, agree on. The request travels as
// a codeproto.Request (tool "script_run", the arguments below), on the
// command line or in a request file, and the answer is a codeproto.Response,
// exactly as for guilds-code.
package runproto

import (
	"encoding/json"
	"regexp"
	"time"
)

// HelperPath is where the sandbox image installs the helper.
const HelperPath = "/usr/local/bin/guilds-script-run"

// Tool is the codeproto.Request tool of a script run.
const Tool = "script_run"

// Dir holds the materialised scripts, one <name>.py each.
const Dir = "/home/agent/scripts"

// Timeout is how long a script may run before the helper stops it (exit 124).
const Timeout = 120 * time.Second

// Name is what a script's name matches.
var Name = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// Args are the request's arguments.
type Args struct {
	Name string `json:"name"`
	// Arguments are written to the script's stdin as JSON; empty means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// TimeoutSeconds shortens Timeout (tests); 0 or more than Timeout is Timeout.
	// The model never sets it: script_run's schema has no such field.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// Limit is the timeout of a run with these arguments.
func (a Args) Limit() time.Duration {
	d := time.Duration(a.TimeoutSeconds * float64(time.Second))
	if d <= 0 || d > Timeout {
		return Timeout
	}
	return d
}

// Path is the sandbox path of a script's file.
func Path(name string) string { return Dir + "/" + name + ".py" }
