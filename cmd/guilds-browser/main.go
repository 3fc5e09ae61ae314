// Command guilds-browser runs one browser tool call inside an agent's
// sandbox, against the Chromium it keeps running there (CDP on
// 127.0.0.1:9222; started on first need, detached, and again when it died).
//
// Its only argument is the request (browserproto): base64 JSON, or
// "@<path>" naming a JSON file under /run/guilds/requests/, which it reads
// and deletes. It prints one browserproto.Response as base64 JSON and exits
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
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/guilds/guilds/internal/browserops"
	"github.com/guilds/guilds/internal/browserproto"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

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
		_, _ = fmt.Fprintln(stderr, "usage: guilds-browser <base64 request> | @/run/guilds/requests/<file>")
		return 2
	}
	req, err := readRequest(args[0])
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "guilds-browser: %v\n", err)
		return 2
	}
	out, err := browserproto.Encode(browserops.Serve(ctx, browserops.Config{}, req))
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "guilds-browser: encode response: %v\n", err)
		return 1
	}
	if _, err := fmt.Fprintln(stdout, out); err != nil {
		return 1
	}
	return 0
}

// maxRequestFile bounds a request file (a long script or text to type).
const maxRequestFile = 4 << 20

// readRequest decodes the argument: the base64 request itself, or
// "@<path>" naming a request file directly under the request folder,
// which is deleted once read.
func readRequest(arg string) (browserproto.Request, error) {
	p, isFile := strings.CutPrefix(arg, "@")
	if !isFile {
		return browserproto.DecodeRequest([]byte(arg))
	}
	clean := filepath.Clean(p)
	name, ok := strings.CutPrefix(clean, browserproto.RequestDir+"/")
	if !ok || name == "" || strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return browserproto.Request{}, fmt.Errorf("request file %q is not a file directly under %s", p, browserproto.RequestDir)
	}
	f, err := os.Open(clean) //nolint:gosec // G304: a request file under the request folder
	if err != nil {
		return browserproto.Request{}, fmt.Errorf("request file %s: %w", p, err)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxRequestFile+1))
	_ = f.Close()
	_ = os.Remove(clean) //nolint:gosec // G703: checked above to be a file directly under the request folder
	if err != nil {
		return browserproto.Request{}, fmt.Errorf("request file %s: %w", p, err)
	}
	if len(raw) > maxRequestFile {
		return browserproto.Request{}, fmt.Errorf("request file %s is over %d bytes", p, maxRequestFile)
	}
	return browserproto.DecodeRequest(raw)
}
