package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

const tokensUsage = "usage: guilds tokens create --admin | --org ID | --user ID [--name NAME] [--expires 30d] | list [--user ID] | revoke TOKEN_ID | disable-user USER_ID | enable-user USER_ID" //nolint:gosec // G101: a usage line that names TOKEN_ID, not a credential

func tokensCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, tokensUsage)
		return 2
	}
	run, ok := map[string]func(context.Context, []string, io.Writer, io.Writer) int{
		"create": tokensCreate, "list": tokensList, "revoke": tokensRevoke,
		"disable-user": tokensSetDisabled(true), "enable-user": tokensSetDisabled(false),
	}[args[0]]
	if !ok {
		fmt.Fprintln(stderr, tokensUsage)
		return 2
	}
	return run(ctx, args[1:], stdout, stderr)
}

// tokensDB opens the database for a tokens subcommand.
func tokensDB(ctx context.Context, stderr io.Writer) (*pgxpool.Pool, int) {
	cfg, ok := loadConfig(stderr)
	if !ok {
		return nil, 2
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return nil, 1
	}
	return pool, 0
}

func tokensCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokens create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.Bool("admin", false, "mint a token for a new instance admin")
	org := fs.String("org", "", "mint a token for a new operator of this organisation id")
	user := fs.String("user", "", "mint another token for this existing user id")
	name := fs.String("name", "", "name of the new user")
	expires := fs.String("expires", "", "lifetime of the token (30m, 12h, 30d); never expires when unset")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	chosen := 0
	for _, set := range []bool{*admin, *org != "", *user != ""} {
		if set {
			chosen++
		}
	}
	if chosen != 1 {
		fmt.Fprintln(stderr, "guilds tokens create: give exactly one of --admin, --org ID or --user ID")
		return 2
	}
	var lifetime time.Duration
	if *expires != "" {
		d, err := access.ParseLifetime(*expires)
		if err != nil {
			fmt.Fprintln(stderr, "guilds tokens create: --expires:", err)
			return 2
		}
		lifetime = d
	}
	pool, code := tokensDB(ctx, stderr)
	if pool == nil {
		return code
	}
	defer pool.Close()
	if *name == "" {
		*name = "admin"
		if *org != "" {
			*name = "operator"
		}
	}
	var token string
	err := store.InTx(ctx, pool, func(tx pgx.Tx) error {
		uid := *user
		if uid == "" {
			u, err := access.CreateUser(ctx, tx, *name, "", *admin)
			if err != nil {
				return err
			}
			uid = u.ID
		}
		if *org != "" {
			if err := access.AddMember(ctx, tx, uid, *org, access.RoleOperator); err != nil {
				return fmt.Errorf("organisation %s: %w", *org, err)
			}
		}
		var err error
		_, token, err = access.MintExpiring(ctx, tx, uid, "minted by guilds tokens create", lifetime)
		return err
	})
	missing := errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidReference)
	switch {
	case missing && *org != "":
		fmt.Fprintf(stderr, "guilds tokens create: no organisation has id %q (GET /api/orgs lists their ids)\n", *org)
		return 1
	case missing && *user != "":
		fmt.Fprintf(stderr, "guilds tokens create: no user has id %q (guilds tokens list shows user ids)\n", *user)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	fmt.Fprintln(stdout, token)
	return 0
}

func tokensList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokens list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "only this user's tokens")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pool, code := tokensDB(ctx, stderr)
	if pool == nil {
		return code
	}
	defer pool.Close()
	list, err := access.ListTokens(ctx, pool, *user)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tUSER\tNAME\tCREATED\tEXPIRES\tSTATE")
	for _, t := range list {
		expires := "never"
		if t.ExpiresAt != nil {
			expires = t.ExpiresAt.UTC().Format(time.RFC3339)
		}
		state := "active"
		switch {
		case t.RevokedAt != nil:
			state = "revoked"
		case t.ExpiresAt != nil && !time.Now().Before(*t.ExpiresAt):
			state = "expired"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.UserID, t.Name, t.CreatedAt.UTC().Format(time.RFC3339), expires, state)
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}

func tokensRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: guilds tokens revoke TOKEN_ID (guilds tokens list shows the ids)")
		return 2
	}
	pool, code := tokensDB(ctx, stderr)
	if pool == nil {
		return code
	}
	defer pool.Close()
	// The CLI runs with the database's credentials: it acts as an instance admin.
	t, err := access.RevokeToken(ctx, pool, access.Principal{Admin: true}, args[0])
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "guilds tokens revoke: no token has id %q (guilds tokens list shows the ids)\n", args[0])
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	fmt.Fprintf(stdout, "revoked token %s of user %s\n", t.ID, t.UserID)
	return 0
}

func tokensSetDisabled(disabled bool) func(context.Context, []string, io.Writer, io.Writer) int {
	verb := map[bool]string{true: "disable-user", false: "enable-user"}[disabled]
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) != 1 {
			fmt.Fprintf(stderr, "usage: guilds tokens %s USER_ID (guilds tokens list shows user ids)\n", verb)
			return 2
		}
		pool, code := tokensDB(ctx, stderr)
		if pool == nil {
			return code
		}
		defer pool.Close()
		err := access.SetUserDisabled(ctx, pool, args[0], disabled)
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(stderr, "guilds tokens %s: no user has id %q\n", verb, args[0])
			return 1
		}
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
		state := map[bool]string{true: "disabled: every token of theirs is refused", false: "enabled"}[disabled]
		fmt.Fprintf(stdout, "user %s %s\n", args[0], state)
		return 0
	}
}
