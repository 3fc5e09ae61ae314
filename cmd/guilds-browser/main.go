// Command guilds-browser runs one browser tool call inside an agent's
// sandbox, against the Chromium it keeps running there (CDP on
// 127.0.0.1:9222; started on first need, detached, and again when it died).
//
// Its only argument is the request (browserproto, through sandbox/helper):
// base64 JSON, or "@<path>" naming a JSON file under /run/guilds/requests/,
// which it reads and deletes. It prints one browserproto.Response as base64 JSON and exits
// 0; a non-zero exit means the helper itself failed, never a tool result.
// Run as "guilds-browser --relay <socket> <addr>" it is the relay from the
// sandbox's loopback to the platform's forward proxy. Run as
// "guilds-browser --start-browser [--proxy]" (by the orchestrator, as the
// browser's own uid) it starts Chromium when it does not answer, and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/guilds/guilds/internal/browserops"
	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/sandbox/helper"
)

func main() { helper.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 3 && args[0] == browserops.RelayArg {
		socket, addr := args[1], args[2] //nolint:gosec // G602: len(args) == 3 is checked just above
		signal.Ignore(syscall.SIGHUP)
		// The relay serves until the sandbox ends; it returns only on failure.
		_, _ = fmt.Fprintf(stderr, "guilds-browser relay: %v\n", browserops.Relay(socket, addr))
		return 1
	}
	if len(args) == 3 && args[0] == browserops.WatchArg {
		signal.Ignore(syscall.SIGHUP)
		if err := browserops.WatchDialogs(args[1], args[2]); err != nil { //nolint:gosec // G602: len(args) == 3 above
			_, _ = fmt.Fprintf(stderr, "guilds-browser dialog watcher: %v\n", err)
			return 1
		}
		return 0
	}
	if len(args) >= 1 && args[0] == browserproto.StartArg {
		proxy := len(args) == 2 && args[1] == browserproto.ProxyArg
		if err := browserops.StartBrowser(ctx, browserproto.BrowserHome, proxy); err != nil {
			_, _ = fmt.Fprintf(stderr, "guilds-browser: %v\n", err)
			return 1
		}
		return 0
	}
	if len(args) != 1 {
		return helper.Usage(stderr, "guilds-browser")
	}
	return helper.Serve("guilds-browser", args[0], helper.ReadOptions{MaxFile: maxRequestFile}, stdout, stderr,
		func(req browserproto.Request) browserproto.Response {
			return browserops.Serve(ctx, browserops.Config{}, req)
		})
}

// maxRequestFile bounds a request file (a long script or text to type).
const maxRequestFile = 4 << 20
