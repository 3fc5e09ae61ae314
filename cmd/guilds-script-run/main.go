// Command guilds-script-run runs one of the agent's scripts inside its
// sandbox, for script_run and for a script offered as a tool of its own.
//
// Its only argument is the request (codeproto, tool "script_run", arguments
// runproto.Args): base64 JSON, or "@<path>" naming a JSON file under
// /run/guilds/requests/, which it reads and deletes. It runs
// /home/agent/scripts/<name>.py with python3 from /home/agent, the arguments
// object as JSON on the script's stdin ({} without one), stopped after 120 s
// (exit code 124). The result is shaped as shell's is (the same cleaning, the
// same start-and-end cut around a line naming the full log), then
// exit_code: N when not 0 and the time the script took. It prints one
// codeproto.Response as base64 JSON and exits 0; a non-zero exit means the
// helper itself failed, never a result of the script.
package main

import (
	"context"
	"io"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/sandbox/helper"
)

func main() { helper.Main(run) }

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return helper.Usage(stderr, "guilds-script-run")
	}
	return helper.Serve("guilds-script-run", args[0], codeops.ReadRequest(maxRequestFile), stdout, stderr,
		func(req codeproto.Request) codeproto.Response { return serve(ctx, req) })
}

// maxRequestFile bounds a request file: the arguments and the agent's
// secrets are all it holds.
const maxRequestFile = 4 << 20
