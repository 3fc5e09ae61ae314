package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

const repositoriesUsage = "usage: guilds repositories list -guild ID | add -guild ID -url URL [-name N] [-branch B] | remove -guild ID REPO-ID"

// repositoriesCommand implements `guilds repositories …`: a guild's extra
// git URLs, checked as the API checks them.
func repositoriesCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, repositoriesUsage)
		return 2
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	guild := fs.String("guild", "", "guild id")
	var in githubapp.ExtraRepository
	fs.StringVar(&in.URL, "url", "", "https clone URL")
	fs.StringVar(&in.Name, "name", "", "name (default: the URL's last segment)")
	fs.StringVar(&in.DefaultBranch, "branch", "", "default branch")
	if err := fs.Parse(args[1:]); err != nil || *guild == "" {
		fmt.Fprintln(stderr, repositoriesUsage)
		return 2
	}
	cfg, err := config.Load(nil)
	if err != nil {
		fmt.Fprintln(stderr, "guilds repositories:", err)
		return 1
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "guilds repositories:", err)
		return 1
	}
	defer pool.Close()
	fail := func(err error) int {
		var ve *validation.Error
		switch {
		case errors.As(err, &ve):
			for _, p := range ve.Problems {
				fmt.Fprintf(stderr, "guilds repositories: %s %s\n", p.Field, p.Message)
			}
		case errors.Is(err, store.ErrConflict):
			fmt.Fprintf(stderr, "guilds repositories: the guild lists %s already\n", in.URL)
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidReference):
			fmt.Fprintln(stderr, "guilds repositories: no such guild or repository")
		default:
			fmt.Fprintln(stderr, "guilds repositories:", err)
		}
		return 1
	}
	switch {
	case args[0] == "list" && fs.NArg() == 0:
		repos, err := githubapp.GuildRepositories(ctx, pool, *guild)
		if err != nil {
			return fail(err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tURL\tBRANCH\tFROM")
		for _, r := range repos {
			from := "extra"
			if r.ConnectionID != "" {
				from = "github login " + r.ConnectionID
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.URL, r.DefaultBranch, from)
		}
		_ = tw.Flush()
		return 0
	case args[0] == "add" && fs.NArg() == 0:
		if err := in.Check(); err != nil {
			return fail(err)
		}
		g, err := githubapp.AddExtraRepository(ctx, pool, *guild, in)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "added %s (%s) as %s\n", g.Name, g.URL, g.ID)
		return 0
	case args[0] == "remove" && fs.NArg() == 1:
		if err := githubapp.RemoveExtraRepository(ctx, pool, *guild, fs.Arg(0)); err != nil {
			if errors.Is(err, githubapp.ErrFromLogin) {
				fmt.Fprintln(stderr, "guilds repositories:", err)
				return 1
			}
			return fail(err)
		}
		fmt.Fprintln(stdout, "removed", fs.Arg(0))
		return 0
	}
	fmt.Fprintln(stderr, repositoriesUsage)
	return 2
}
