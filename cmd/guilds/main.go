// Command guilds is the platform's one binary: the API, the Temporal worker,
// the development launcher and the operator commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/guilds/guilds/internal/process"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"dev":     {"migrate, seed and run Temporal (dev server), the API and the worker in one process tree", devCommand},
		"serve":   {"run the HTTP API", serveCommand},
		"worker":  {"run the Temporal worker", workerCommand},
		"migrate": {"apply or roll back database migrations: up | down [N|all] | status", migrateCommand},
		"tokens":  {"API tokens and users: tokens create | list | revoke ID | disable-user ID | enable-user ID", tokensCommand},
		"tools": {"schema shaping and result stamping: tools shape-schema [FILE] | tools stamp --remaining N", func(_ context.Context, args []string, in io.Reader, out, errw io.Writer) int {
			return toolsCommand(args, in, out, errw)
		}},
		"connections":  {"the login lifecycle: connections list | status | connect | refresh | disconnect | test", connectionsCommand},
		"keys":         {"credential encryption keys: keys rotate", keysCommand},
		"repositories": {"a guild's extra git URLs: repositories list | add | remove -guild ID", repositoriesCommand},
		"version": {"print the version", func(_ context.Context, _ []string, _ io.Reader, out, _ io.Writer) int {
			fmt.Fprintln(out, "guilds", version)
			return 0
		}},
	}
}

func main() {
	// Before anything reads a setting or starts a child: no process of this
	// user may read ours, and credentials may come from files (ADR 0615).
	if err := process.NonDumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "guilds: cannot mark the process non-dumpable:", err)
		os.Exit(1)
	}
	if err := process.LoadFileVariables(); err != nil {
		fmt.Fprintln(os.Stderr, "guilds:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "guilds: unknown command %q (try `guilds help`)\n", args[0])
		return 2
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: guilds <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].summary)
	}
}
