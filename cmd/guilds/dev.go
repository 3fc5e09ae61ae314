package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/devserver"
	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/worker"
)

// Ports of the development Temporal server, overridable so that a second copy
// (or a test) can run beside an operator's `make run`.
func devPorts() (frontend, ui int) {
	frontend, ui = 7233, 8233
	if v, err := strconv.Atoi(os.Getenv("GUILDS_DEV_TEMPORAL_PORT")); err == nil && v > 0 {
		frontend = v
	}
	if v, err := strconv.Atoi(os.Getenv("GUILDS_DEV_TEMPORAL_UI_PORT")); err == nil && v > 0 {
		ui = v
	}
	return frontend, ui
}

// devCommand runs the whole platform on development defaults in one process tree.
func devCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: guilds dev (configured by environment; see README)")
		return 2
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := store.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	log := newLogger(stderr)

	var temporal *devserver.Server
	if cfg.TemporalAddress == "" {
		logFile, err := os.OpenFile(filepath.Join(cfg.DataDir, "temporal.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			return 1
		}
		defer func() { _ = logFile.Close() }()
		port, uiPort := devPorts()
		opts := devserver.Options{
			DBFile: filepath.Join(cfg.DataDir, "temporal.db"), Port: port, UIPort: uiPort,
			Namespace: cfg.TemporalNS, Output: logFile,
		}
		// Sealed payloads stay readable in the dev UI: it decodes them through
		// the API's codec endpoint, which needs no token on a loopback API.
		if cfg.SealPayloads && config.Loopback(cfg.HTTPAddr) {
			opts.UICodecEndpoint = "http://" + cfg.HTTPAddr + api.CodecPath
		}
		temporal, err = devserver.Start(ctx, opts)
		var inUse *devserver.PortInUseError
		if errors.As(err, &inUse) {
			variable := "GUILDS_DEV_TEMPORAL_PORT"
			if inUse.UI {
				variable = "GUILDS_DEV_TEMPORAL_UI_PORT"
			}
			fmt.Fprintf(stderr, "guilds: %v: set %s to another port, or TEMPORAL_ADDRESS to use that server\n", err, variable)
			return 1
		}
		if err != nil {
			fmt.Fprintf(stderr, "guilds: %v (its log: %s)\n", err, logFile.Name())
			return 1
		}
		defer temporal.Stop()
		cfg.TemporalAddress = temporal.Address
	}

	p, err := openPlatform(ctx, cfg, log, true)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer p.close()
	if _, err := migrate.Up(ctx, p.db); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := p.seed(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := p.startConnectors(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	token, err := firstAdminToken(ctx, p.db)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	srv, err := p.apiServer(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if temporal != nil {
		srv.TemporalUI = temporal.UIURL + "/namespaces/" + cfg.TemporalNS + "/workflows/"
	}
	// Bound before the banner: once it is printed, the API answers.
	ln, err := api.Listen(cfg.HTTPAddr)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}

	stopWorkspaces, err := p.startWorkspaces(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer stopWorkspaces()

	ui := "(external Temporal: see its own UI)"
	if temporal != nil {
		ui = temporal.UIURL
	}
	printDevBanner(stdout, cfg, ui, token)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		errc <- srv.ServeOn(ctx, ln)
	}()
	go func() {
		defer wg.Done()
		go p.reconcileSchedules(ctx)
		errc <- worker.RunWith(ctx, p.temporal, log, p.reporter, p.workerLimits(), p.registrations()...)
	}()
	code := 0
	select {
	case <-ctx.Done():
	case err := <-errc:
		if err != nil {
			fmt.Fprintln(stderr, "guilds:", err)
			code = 1
		}
	}
	cancel()
	wg.Wait()
	fmt.Fprintln(stdout, "guilds dev stopped")
	return code
}

// firstAdminToken mints an instance-admin token when the box has none yet and
// returns it; it returns "" when an admin token already exists.
func firstAdminToken(ctx context.Context, db *pgxpool.Pool) (string, error) {
	var token string
	err := store.InTx(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(7164)"); err != nil {
			return err
		}
		var exists bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_tokens t JOIN users u ON u.id = t.user_id
			WHERE u.instance_admin AND t.revoked_at IS NULL)`).Scan(&exists)
		if err != nil || exists {
			return err
		}
		u, err := access.CreateUser(ctx, tx, "admin", "", true)
		if err != nil {
			return err
		}
		token, err = access.MintToken(ctx, tx, u.ID, "first admin token (guilds dev)")
		return err
	})
	if err != nil {
		return "", errors.Join(errors.New("mint the first admin token"), err)
	}
	return token, nil
}

// printDevBanner tells where everything is. The admin token exists only on the
// first start; later starts say how to get another one, since it is not stored.
func printDevBanner(w io.Writer, cfg config.Config, ui, token string) {
	fmt.Fprintf(w, "guilds dev is up\n  API:         http://%s  (OpenAPI at /api/openapi.json)\n  Temporal:    %s  UI %s\n  PostgreSQL:  %s\n  Redis:       %s\n  Auth mode:   %s\n",
		cfg.HTTPAddr, cfg.TemporalAddress, ui, config.Redact(cfg.DatabaseURL), config.Redact(cfg.RedisURL), cfg.AuthMode)
	switch {
	case token != "":
		fmt.Fprintf(w, "  Admin token (shown once; mint more with `guilds tokens create --admin`):\n    %s\n", token)
	case cfg.AuthMode == "token":
		fmt.Fprintln(w, "  Admin token: printed on the first start only; mint another with `guilds tokens create --admin`")
	}
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}
