package code

import (
	"encoding/json"
	"time"
)

// How long the helper may take for one call. The run workflow adds its own
// margin (sandbox start, recording the result) on top for the activity.
const (
	// ShellDefault and ShellMax bound a shell command (timeout_seconds).
	ShellDefault = 120 * time.Second
	ShellMax     = 600 * time.Second
	// shellReport covers the helper stopping a command at its timeout
	// (SIGTERM, SIGKILL two seconds later) and reporting back.
	shellReport = 10 * time.Second
	// SearchTimeout bounds the file tools, text search and syntax search.
	SearchTimeout = 60 * time.Second
	// GraphTimeout bounds the graph-backed calls: a first build of a large
	// repository can take minutes.
	GraphTimeout = 11 * time.Minute
	// statusTimeout bounds shell_status, which reads a log and a pid.
	statusTimeout = 30 * time.Second
)

// ExecTimeout is how long the helper may run for a call of tool with these
// arguments; ok is false when tool is not a code tool. It only reads the
// arguments, so the run workflow can call it.
func ExecTimeout(tool string, args json.RawMessage) (d time.Duration, ok bool) {
	switch tool {
	case ToolShell:
		var a struct {
			TimeoutSeconds float64 `json:"timeout_seconds"`
			Background     bool    `json:"background"`
		}
		_ = json.Unmarshal(args, &a)
		if a.Background {
			return statusTimeout, true // started, not waited for
		}
		return shellTimeout(a.TimeoutSeconds) + shellReport, true
	case ToolShellStatus:
		return statusTimeout, true
	case ToolFileRead, ToolFileEdit, ToolFileWrite, ToolCodeMatch:
		return SearchTimeout, true
	case ToolCodeSearch:
		var a struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(args, &a)
		if a.Mode == "symbols" {
			return GraphTimeout, true
		}
		return SearchTimeout, true
	case ToolCodeMap, ToolCodeFind, ToolCodeOutline, ToolCodeCallers:
		return GraphTimeout, true
	}
	return 0, false
}

// shellTimeout is a command's own timeout: timeout_seconds, default 120 s,
// at most 600 s.
func shellTimeout(seconds float64) time.Duration {
	if seconds <= 0 {
		return ShellDefault
	}
	return min(time.Duration(seconds*float64(time.Second)), ShellMax)
}
