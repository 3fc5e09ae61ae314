package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/store"
)

// keysCommand implements `guilds keys rotate [-batch N]`: re-seal every
// sealed value of every table under the active key of GUILDS_ENCRYPTION_KEY,
// report each table, and exit non-zero while any row is under another key
// (the old key must not be dropped yet).
func keysCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const usage = "usage: guilds keys rotate [-batch N]"
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("rotate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	batch := fs.Int("batch", 100, "rows per transaction")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 || *batch <= 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	cfg, err := config.Load(nil)
	if err != nil {
		fmt.Fprintln(stderr, "guilds keys:", err)
		return 1
	}
	keys, err := loadKeyring(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "guilds keys:", err)
		return 1
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "guilds keys:", err)
		return 1
	}
	defer pool.Close()
	active := keys.ActiveKeyID()
	sets := sealedRegistry()
	st, err := sets.Rotate(ctx, pool, keys, *batch, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, t := range st.Tables {
		fmt.Fprintf(stdout, "%-26s re-sealed %d, already under %s %d, left under another key %d\n", t.Table, t.Resealed, active, t.Current, t.Remaining)
	}
	if err != nil {
		fmt.Fprintf(stderr, "guilds keys rotate: %v\n", err)
		return 1
	}
	unknown, err := sets.UnknownKeyIDs(ctx, pool, keys)
	if err != nil {
		fmt.Fprintf(stderr, "guilds keys rotate: %v\n", err)
		return 1
	}
	sort.Slice(unknown, func(i, j int) bool { return unknown[i].Table+unknown[i].KeyID < unknown[j].Table+unknown[j].KeyID })
	for _, u := range unknown {
		fmt.Fprintf(stderr, "guilds keys rotate: %d rows of %s are sealed with key %q, which GUILDS_ENCRYPTION_KEY lacks: add it back as a non-active entry and run again\n", u.Rows, u.Table, u.KeyID)
	}
	if !st.Complete() {
		fmt.Fprintf(stderr, "guilds keys rotate: not complete: rows remain under a key other than %s; keep the old keys in GUILDS_ENCRYPTION_KEY and run again\n", active)
		return 1
	}
	fmt.Fprintf(stdout, "re-encrypted %d credentials and %d pending logins (%d sealed values in all); every sealed value is under key %s: older keys may be dropped\n",
		st.Of(connectors.CredentialsTable).Resealed, st.Of(connectors.PendingTable).Resealed, st.Resealed(), active)
	return 0
}

// sealedRegistry registers the sealed values of every owner: what
// `guilds keys rotate` re-seals and start-up checks for key ids the keyring
// lacks. A new table of sealed values is declared by its owner and added
// here (TestRotationCoversEverySealedTable finds one that is not).
func sealedRegistry() *sealed.Registry {
	r := sealed.NewRegistry(connectors.SealedSets()...)
	r.Register(models.SealedKeys, githubapp.SealedTokens)
	r.Register(agentsecrets.SealedTables...)
	return r
}
