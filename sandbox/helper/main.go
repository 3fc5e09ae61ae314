package helper

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Run is a helper's main without the process: it returns the exit code.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Main runs a helper and exits with its code. The context ends on SIGTERM,
// SIGINT or SIGHUP: a helper stopped from outside (the exec's timeout)
// passes it on to what it started.
func Main(run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Usage prints a helper's usage line and returns the exit code of a bad
// invocation, 2.
func Usage(stderr io.Writer, name string) int {
	_, _ = fmt.Fprintf(stderr, "usage: %s <base64 request> | @%s/<file>\n", name, RequestDir)
	return 2
}
