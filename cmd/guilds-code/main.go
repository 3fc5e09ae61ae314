// Command guilds-code runs one code tool call inside an agent's sandbox.
//
// Its only argument is the request (codeproto): base64 JSON, or "@<path>"
// naming a JSON file under /run/guilds/requests/, which it reads and
// deletes. It prints one codeproto.Response as base64 JSON and exits 0; a
// non-zero exit means the helper itself failed, never a tool result.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox/helper"
)

// handler serves one tool. A tool-level failure is an "ERROR: ..." text in
// the Response, never a Go error.
type handler func(ctx context.Context, env *codeops.Env, args json.RawMessage) codeproto.Response

// handlers maps a tool name to its handler. graph.go registers the
// graph-backed tools (code_map, code_find, code_outline, code_callers) from
// its init.
var handlers = map[string]handler{}

// symbolSearch serves code_search mode symbols; graph.go sets it. nil means
// this build has no code graph.
var symbolSearch func(ctx context.Context, env *codeops.Env, args json.RawMessage) codeproto.Response

// main: a helper stopped from outside (the exec's own timeout) passes it
// on, so a running shell command's process group, which is a group of its
// own, is stopped too.
func main() { helper.Main(run) }

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return helper.Usage(stderr, "guilds-code")
	}
	if args[0] == codeops.JobArg {
		return codeops.SuperviseJob(args[1:], stderr)
	}
	if len(args) != 1 {
		_, _ = fmt.Fprintln(stderr, "guilds-code: expected one argument, the request")
		return 2
	}
	return helper.Serve("guilds-code", args[0], codeops.ReadRequest(maxRequestFile), stdout, stderr,
		func(req codeproto.Request) codeproto.Response { return serve(ctx, req) })
}

// maxRequestFile bounds a request file (a file_write's content is the
// largest part).
const maxRequestFile = 32 << 20

// serve runs one request through its handler and caps the result.
func serve(ctx context.Context, req codeproto.Request) (resp codeproto.Response) {
	env, err := codeops.NewEnv(req)
	if err != nil {
		return codeops.Errorf("%v", err)
	}
	h, ok := handlers[req.Tool]
	if !ok {
		return codeops.Errorf("tool: %q is not a code tool this helper knows", req.Tool)
	}
	defer func() {
		if p := recover(); p != nil {
			resp = codeops.Errorf("guilds-code failed on %s: %v", req.Tool, p)
		}
		resp.Text = codeops.CapText(resp.Text, env.MaxBytes())
	}()
	env.TouchRun()
	args := req.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return h(ctx, env, args)
}
