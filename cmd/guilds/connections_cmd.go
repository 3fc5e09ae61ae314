package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/term"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/configured"
	_ "github.com/guilds/guilds/internal/connectors/providers/google"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

const connectionsUsage = "usage: guilds connections list | status <id> | connect <server-slug> -scope S -owner ID [-values] [-timeout D] | connect <id> [-values] [-timeout D] | refresh <id> | disconnect <id> | test <id>"

const connectUsage = "usage: guilds connections connect <server-slug> -scope organisation|guild|agent -owner ID [-values] [-timeout D] | connect <connection-id> [-values] [-timeout D]"

// connectionsCommand implements `guilds connections …`, the OAuth and key
// lifecycle of connections from the command line. Keys are read from stdin
// (or a prompt), never from arguments; with -values, a row's fields come as
// one JSON object on stdin.
func connectionsCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, connectionsUsage)
		return 2
	}
	sub, rest := args[0], args[1:]
	var (
		id      uuid.UUID
		slug    string
		scope   string
		owner   string
		timeout time.Duration
		asJSON  bool // connect reads the fields as one JSON object
		created bool // connect made a new connection row
	)
	switch sub {
	case "list":
		if len(rest) != 0 {
			fmt.Fprintln(stderr, "usage: guilds connections list")
			return 2
		}
	case "status", "refresh", "disconnect", "test":
		if len(rest) != 1 {
			fmt.Fprintf(stderr, "usage: guilds connections %s <connection-id>\n", sub)
			return 2
		}
		var err error
		if id, err = uuid.Parse(rest[0]); err != nil {
			fmt.Fprintf(stderr, "guilds connections %s: %q is not a connection id\n", sub, rest[0])
			return 2
		}
	case "connect":
		fs := flag.NewFlagSet("connect", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.StringVar(&scope, "scope", "", "owner scope of a new connection: organisation, guild or agent")
		fs.StringVar(&owner, "owner", "", "owner id (organisation, guild or agent)")
		fs.DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the OAuth callback")
		fs.BoolVar(&asJSON, "values", false, "read the key fields as one JSON object on stdin")
		if len(rest) == 0 {
			fmt.Fprintln(stderr, connectUsage)
			return 2
		}
		target := rest[0]
		if err := fs.Parse(rest[1:]); err != nil || fs.NArg() != 0 {
			fmt.Fprintln(stderr, connectUsage)
			return 2
		}
		if u, err := uuid.Parse(target); err == nil {
			// An existing connection keeps its own scope.
			if scope != "" || owner != "" {
				fmt.Fprintln(stderr, "guilds connections connect: a connection id keeps its own scope; -scope and -owner go with a server slug")
				return 2
			}
			id = u
			break
		}
		slug = target
		if msg := checkConnectScope(scope, owner); msg != "" {
			fmt.Fprintln(stderr, "guilds connections connect: "+msg)
			return 2
		}
	default:
		fmt.Fprintln(stderr, connectionsUsage)
		return 2
	}

	eng, db, closeAll, err := openConnectors(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "guilds connections:", err)
		return 1
	}
	defer closeAll()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "guilds connections %s: %s\n", sub, strings.Join(strings.Fields(err.Error()), " "))
		return 1
	}
	// The terminal connects with the same service as the API; a key is
	// checked with the server under the worker's outbound policy.
	svc := &connections.Service{DB: db, Engine: eng, Checker: mcppool.Checker{DB: db, Engine: eng, HTTP: outboundClient()},
		Adapters: host.New(host.Options{DB: db, Credentials: eng.Resolver(), HTTP: outboundClient()})}
	switch sub {
	case "list":
		conns, err := eng.List(ctx)
		if err != nil {
			return fail(err)
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSERVER\tSCOPE\tSTATUS\tHEALTH\tACCOUNT")
		for _, c := range conns {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.ServerSlug, c.OwnerScope, c.Status, c.Health.State, c.AccountHint)
		}
		_ = tw.Flush()
	case "status":
		c, err := eng.Get(ctx, id)
		if err != nil {
			return fail(err)
		}
		printStatus(stdout, c)
	case "connect":
		if slug != "" {
			var ownerID *uuid.UUID
			if owner != "" {
				u, err := uuid.Parse(owner)
				if err != nil {
					fmt.Fprintf(stderr, "guilds connections connect: -owner %q is not an id\n", owner)
					return 2
				}
				ownerID = &u
			}
			cid, isNew, err := svc.Open(ctx, slug, scope, ownerID)
			if err != nil {
				return fail(err)
			}
			id, created = cid.UUID(), isNew
		}
		c, err := eng.Get(ctx, id)
		if err != nil {
			return fail(err)
		}
		if c.OwnerScope == string(grants.ScopePlatform) {
			return fail(platformReservedCLI())
		}
		if c.Auth == connectors.AuthOAuth && asJSON {
			err = fmt.Errorf("%s is an OAuth login: -values goes with key logins only", c.ServerSlug)
		} else if c.Auth == connectors.AuthOAuth {
			err = connectOAuth(ctx, eng, c, timeout, stdout)
			if err == nil {
				err = finishOAuthLogin(ctx, svc, c.ID, stdout)
			}
		} else {
			err = connectKey(ctx, svc, c, keyReader{in: stdin, json: asJSON}, stderr)
		}
		if err != nil {
			if created {
				// A refused or abandoned first login leaves no pending row behind.
				if _, aerr := svc.AbandonNew(context.WithoutCancel(ctx), id.String()); aerr != nil {
					fmt.Fprintf(stderr, "guilds connections connect: could not remove the pending connection %s: %s\n", id, oneLineErr(aerr))
				}
			}
			return fail(err)
		}
		fmt.Fprintf(stdout, "connected %s (%s)\n", c.ServerSlug, c.ID)
	case "refresh":
		if _, err := eng.Resolver().Refresh(ctx, id); err != nil {
			return fail(err)
		}
		c, err := eng.Get(ctx, id)
		if err != nil {
			return fail(err)
		}
		printStatus(stdout, c)
	case "disconnect":
		if err := svc.Disconnect(ctx, id.String(), audit.ActorTerminal); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "disconnected %s\n", id)
	case "test":
		if err := eng.Test(ctx, id); err != nil {
			return fail(err)
		}
		line, err := probe(ctx, svc, id)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "ok %s%s\n", id, line)
	}
	return 0
}

// checkConnectScope says what is wrong with a new connection's -scope and
// -owner, or "" when they name an organisation, guild or agent.
func checkConnectScope(scope, owner string) string {
	switch grants.Scope(scope) {
	case "":
		return "-scope is required: organisation, guild or agent, with -owner ID"
	case grants.ScopePlatform:
		return platformReservedCLI().Error()
	case grants.ScopeOrganisation, grants.ScopeGuild, grants.ScopeAgent:
		if owner == "" {
			return "-owner is required with -scope " + scope
		}
		return ""
	default:
		return fmt.Sprintf("-scope %q is not organisation, guild or agent", scope)
	}
}

// platformReservedCLI is the API's platform_scope_reserved refusal, as the
// terminal says it.
func platformReservedCLI() error {
	return fmt.Errorf("%w; connect it with -scope organisation, guild or agent and -owner ID", connections.ErrPlatformReserved)
}

// probe asks a remote MCP server or a local adapter whether the stored login
// works (through the same pool the worker uses); other connections have
// nothing more to ask than the engine's own test.
func probe(ctx context.Context, svc *connections.Service, id uuid.UUID) (string, error) {
	pool := terminalPool(svc.DB, svc.Engine)
	defer pool.Close()
	withPool := *svc
	withPool.Sessions = pool
	line, err := withPool.Probe(ctx, id.String())
	if err != nil || line == "" {
		return "", err
	}
	return ": " + line, nil
}

// outboundClient carries the terminal's calls to MCP servers and adapters
// under the same outbound policy as the worker's (GUILDS_OAUTH_ALLOW_PRIVATE).
func outboundClient() *http.Client { return mcpoauth.PolicyFromEnv(os.Getenv).Client(0) }

// terminalPool is a session pool for one command; the caller closes it.
func terminalPool(db *pgxpool.Pool, eng *connectors.Engine) *mcppool.Pool {
	return mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver(), HTTPClient: outboundClient()})
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

func printStatus(w io.Writer, c connectors.Connection) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	row("id", c.ID)
	row("server", c.ServerSlug)
	row("provider", c.Ref)
	row("auth", c.Auth)
	row("scope", c.OwnerScope)
	if c.OwnerID != nil {
		row("owner", *c.OwnerID)
	}
	row("status", c.Status)
	row("account", c.AccountHint)
	row("health", c.Health.State)
	row("attempts", c.Health.Attempts)
	row("next retry", when(c.Health.NextRetryAt))
	row("last success", when(c.Health.LastSuccessAt))
	row("last failure", when(c.Health.LastFailureAt))
	if c.Health.LastErrorCode != "" {
		row("last error", c.Health.LastErrorCode)
	}
	_ = tw.Flush()
}

// connectOAuth prints the authorization URL and completes the login when the
// browser comes back to a loopback listener on a random port.
func connectOAuth(ctx context.Context, eng *connectors.Engine, c connectors.Connection, timeout time.Duration, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	authURL, err := eng.BeginOAuth(ctx, c.ID, redirect)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Open this URL in a browser to authorise %s (waiting up to %s):\n%s\n", c.ServerSlug, timeout, authURL)
	done := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			http.Error(w, "Authorisation refused: "+html.EscapeString(e), http.StatusBadRequest)
			select {
			case done <- fmt.Errorf("the provider refused the authorisation (%s)", sanitize(e)):
			default:
			}
			return
		}
		_, err := eng.CompleteOAuth(r.Context(), q.Get("state"), q.Get("code"))
		if errors.Is(err, connectors.ErrBadState) {
			http.Error(w, "Unknown or expired login; start again.", http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, "The login failed; see the terminal.", http.StatusBadGateway)
		} else {
			fmt.Fprintln(w, "Connected. You can close this tab.")
		}
		select {
		case done <- err:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // best effort: the wait is over either way
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("no OAuth callback within %s", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sanitize(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// finishOAuthLogin does what the connect workflow's last step does for a login
// completed from the terminal (connections.Finish): the stored hint and the
// enabled binding, then the first listing of a remote server's login. The
// adapter check stays the workflow's.
func finishOAuthLogin(ctx context.Context, svc *connections.Service, id uuid.UUID, stdout io.Writer) error {
	pool := terminalPool(svc.DB, svc.Engine)
	defer pool.Close()
	withPool := *svc
	withPool.Sessions = pool
	r, err := withPool.Finish(ctx, id.String(), connections.Options{HintFrom: connections.HintStored, ListRemoteOnly: true, Actor: audit.ActorTerminal})
	switch {
	case err != nil:
		return err
	case r.ListErr != nil:
		fmt.Fprintf(stdout, "connected, but the first listing failed (tools appear at the next run start): %s\n", oneLineErr(r.ListErr))
	case r.FirstListing:
		fmt.Fprintf(stdout, "%d tools listed\n", r.Tools)
	}
	return nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// loadKeyring reads GUILDS_ENCRYPTION_KEY, or the development key that
// `guilds dev` keeps under GUILDS_DATA_DIR when the variable is unset.
func loadKeyring(cfg config.Config) (*secret.Keyring, error) {
	if strings.TrimSpace(cfg.EncryptionKey) != "" {
		return secret.ParseKeyring(cfg.EncryptionKey)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, secret.DevKeyFile)); err == nil {
		return secret.DevKeyring(cfg.DataDir)
	}
	return nil, secret.ErrNoKey
}

// openConnectors builds an engine with every compiled-in provider.
func openConnectors(ctx context.Context, stderr io.Writer) (*connectors.Engine, *pgxpool.Pool, func(), error) {
	cfg, err := config.Load(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := loadKeyring(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := connectors.Options{DB: pool, Keyring: keys, Logger: log, Providers: connectors.Registered(),
		HTTPClient: mcpoauth.PolicyFromEnv(os.Getenv).Client(30 * time.Second)}
	if rdb, err := connectors.NewRedisClient(cfg.RedisURL); err == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		if rdb.Ping(pctx).Err() == nil {
			opts.Redis = rdb
		} else {
			_ = rdb.Close()
			fmt.Fprintln(stderr, "guilds connections: Redis is not reachable at REDIS_URL; continuing with PostgreSQL only")
		}
		cancel()
	}
	eng, err := connectors.New(ctx, opts)
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	return eng, pool, func() {
		eng.Close()
		if opts.Redis != nil {
			_ = opts.Redis.Close()
		}
		pool.Close()
	}, nil
}
