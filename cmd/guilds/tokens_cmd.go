package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

func tokensCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stderr, "usage: guilds tokens create --admin | --org ID [--name NAME]")
		return 2
	}
	fs := flag.NewFlagSet("tokens create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.Bool("admin", false, "mint a token for a new instance admin")
	org := fs.String("org", "", "mint a token for a new operator of this organisation id")
	name := fs.String("name", "", "name of the new user")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *admin == (*org != "") {
		fmt.Fprintln(stderr, "guilds tokens create: give exactly one of --admin or --org ID")
		return 2
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer pool.Close()
	if *name == "" {
		*name = "admin"
		if *org != "" {
			*name = "operator"
		}
	}
	var token string
	err = store.InTx(ctx, pool, func(tx pgx.Tx) error {
		u, err := access.CreateUser(ctx, tx, *name, "", *admin)
		if err != nil {
			return err
		}
		if *org != "" {
			if err := access.AddMember(ctx, tx, u.ID, *org, access.RoleOperator); err != nil {
				return fmt.Errorf("organisation %s: %w", *org, err)
			}
		}
		token, err = access.MintToken(ctx, tx, u.ID, "minted by guilds tokens create")
		return err
	})
	if *org != "" && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidReference)) {
		fmt.Fprintf(stderr, "guilds tokens create: no organisation has id %q (GET /api/orgs lists their ids)\n", *org)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	fmt.Fprintln(stdout, token)
	return 0
}
