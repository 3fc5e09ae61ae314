package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/store"
)

func migrateCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args) > 2 || (args[0] != "down" && len(args) > 1) {
		fmt.Fprintln(stderr, "usage: guilds migrate up | down [N|all] | status")
		return 2
	}
	switch args[0] {
	case "up", "down", "status":
	default:
		fmt.Fprintf(stderr, "guilds migrate: unknown action %q (up | down [N|all] | status)\n", args[0])
		return 2
	}
	steps := 1
	if args[0] == "down" && len(args) == 2 {
		if args[1] == "all" {
			steps = 0
		} else if n, err := strconv.Atoi(args[1]); err == nil && n > 0 {
			steps = n
		} else {
			fmt.Fprintf(stderr, "guilds migrate down: N must be a positive number or all, got %q\n", args[1])
			return 2
		}
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	if args[0] == "up" {
		if err := store.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer pool.Close()
	switch args[0] {
	case "up":
		applied, err := migrate.Up(ctx, pool)
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
		fmt.Fprintf(stdout, "applied %d migration(s) %v\n", len(applied), applied)
		// The native tools as every process declares them: seeding needs
		// their catalog, not their dependencies.
		if err := seed(ctx, pool, native.Registry(nil, slog.New(slog.DiscardHandler))); err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
	case "down":
		reverted, err := migrate.Down(ctx, pool, steps)
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
		fmt.Fprintf(stdout, "rolled back %d migration(s) %v\n", len(reverted), reverted)
	case "status":
		list, err := migrate.List(ctx, pool)
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
		for _, m := range list {
			state := "pending"
			if m.AppliedAt != nil {
				state = "applied " + m.AppliedAt.Format("2006-01-02 15:04:05Z07:00")
			}
			fmt.Fprintf(stdout, "%03d_%-30s %s\n", m.Version, m.Name, state)
		}
	}
	return 0
}
