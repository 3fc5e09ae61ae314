package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
)

// Call is one tool call as the run loop hands it to a handler.
type Call struct {
	Name string          // model-facing tool name
	Args json.RawMessage // arguments as the model sent them (already validated when the handler runs)

	RunID, AgentID, GuildID, OrgID string // may be empty outside a run

	Trigger string // "direct" | "group" | "schedule" (may be empty)

	// Seq is the message seq the call's result is stored at, and CallID the
	// model's id for the call; both are zero outside a run.
	Seq    int
	CallID string
}

// Handler runs a native tool. It returns the raw result; the caller stamps it.
// An error becomes the result "ERROR: <err>"; a panic is recovered.
type Handler func(ctx context.Context, call Call) (string, error)

// Tool declares one native tool.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage     // explicit JSON Schema of the arguments (an object schema)
	Handler     Handler             // required
	Filter      func(string) string // optional per-tool custom result filter, first step of Stamp
	Idempotent  bool                // safe to retry
	Class       Class               // timeout class; empty means ClassDefault
	// Quick: finishes in milliseconds and, with Idempotent, is safe to run
	// again after a lost worker, so the run workflow calls it as a local
	// activity (docs/adr/0511-fast-path.md). Ignored unless Idempotent.
	Quick bool
	// Listing puts a native tool in the native catalog (family, display
	// group, gate, flag, triggers, integration); zero for a tool that is not
	// catalogued (test stubs).
	Listing Listing
}

// Class names the timeout class of a tool. The run workflow maps a class to
// the activity timeout of the call.
type Class string

// Timeout classes.
const (
	ClassDefault Class = "default"
	ClassBrowser Class = "browser"
	ClassMCP     Class = "mcp"
	ClassCode    Class = "code"
	ClassAdapter Class = "adapter"
	ClassScript  Class = "script"
	ClassShell   Class = "shell"
)

// Valid reports whether c is one of the declared classes.
func (c Class) Valid() bool {
	switch c {
	case ClassDefault, ClassBrowser, ClassMCP, ClassCode, ClassAdapter, ClassScript, ClassShell:
		return true
	}
	return false
}

// namePattern is what model providers accept as a function name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidName reports whether name can be offered to a model as a tool name:
// 1 to 64 ASCII letters, digits, '_' or '-'.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// maxNameInRefusal bounds how much of a model-supplied name is echoed back.
const maxNameInRefusal = 80

// RefuseUnknown is the result for a call to a tool the run does not offer.
func RefuseUnknown(name string) string {
	if len(name) > maxNameInRefusal {
		name = truncateUTF8(name, maxNameInRefusal) + "…"
	}
	return fmt.Sprintf("ERROR: unknown tool %q: this run does not offer it; call only the tools listed for this run", name)
}

// ErrorResult formats a failure as the tool result the model sees.
func ErrorResult(msg string) string {
	if msg == "" {
		msg = "tool failed"
	}
	return "ERROR: " + msg
}
