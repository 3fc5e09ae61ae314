package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcpconformance"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// ScratchDatabase is the database the client keeps its catalog row,
// connection and sealed credentials in.
const ScratchDatabase = "guilds_conformance"

// maxLogins bounds the logins of one run, so a server that keeps refusing
// (or keeps asking for scopes it never accepts) cannot loop the client.
const maxLogins = 3

type client struct {
	log               *slog.Logger
	url               string
	scenario          string
	clientMetadataURL string
	preRegistered     *mcpconformance.PreRegistered

	db    *pgxpool.Pool
	eng   *connectors.Engine
	pool  *mcppool.Pool
	rec   *mcpconformance.Recorder
	loop  *mcpconformance.Loopback
	disc  mcpoauth.Discoverer
	hc    *http.Client // metadata, registration and the authorization GET
	slug  string
	conn  uuid.UUID
	scope []string // scopes of the last login
	// calls are the arguments the scenario asks for, by tool name; other
	// tools get arguments shaped from their schema.
	calls map[string]json.RawMessage
}

// parseContext reads the scenario context the suite passes (a pre-registered
// client's id and secret, for instance).
func (c *client) parseContext(raw string) error {
	if raw == "" {
		return nil
	}
	var ctx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		ToolCalls    []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(raw), &ctx); err != nil {
		return err
	}
	for _, tc := range ctx.ToolCalls {
		if c.calls == nil {
			c.calls = map[string]json.RawMessage{}
		}
		c.calls[tc.Name] = tc.Arguments
	}
	if ctx.ClientID != "" {
		c.preRegistered = &mcpconformance.PreRegistered{ClientID: ctx.ClientID, ClientSecret: ctx.ClientSecret}
	}
	return nil
}

// scratchURL points DATABASE_URL (or the local default) at ScratchDatabase.
func scratchURL(databaseURL string) (string, error) {
	if databaseURL == "" {
		databaseURL = config.DefaultDatabaseURL
	}
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("DATABASE_URL must be a postgres:// URL")
	}
	u.Path = "/" + ScratchDatabase
	return u.String(), nil
}

func (c *client) open(ctx context.Context, databaseURL string) error {
	dsn, err := scratchURL(databaseURL)
	if err != nil {
		return err
	}
	if err := store.EnsureDatabase(ctx, dsn); err != nil {
		return err
	}
	if c.db, err = store.Open(ctx, dsn); err != nil {
		return err
	}
	if _, err := migrate.Up(ctx, c.db); err != nil {
		return fmt.Errorf("migrate %s: %w", ScratchDatabase, err)
	}
	key, err := secret.GenerateKey("conformance")
	if err != nil {
		return err
	}
	keys, err := secret.ParseKeyring(key)
	if err != nil {
		return err
	}
	// Conformance servers listen on localhost over http.
	policy := mcpoauth.Policy{AllowLoopback: true}
	c.hc = policy.Client(15 * time.Second)
	c.disc = mcpoauth.Discoverer{Policy: policy, HTTP: c.hc}
	c.eng, err = connectors.New(ctx, connectors.Options{DB: c.db, Keyring: keys, Logger: c.log,
		Providers: []connectors.ProviderID{oauthgeneric.ID}, HTTPClient: c.hc})
	if err != nil {
		return err
	}
	c.rec = &mcpconformance.Recorder{Next: http.DefaultTransport.(*http.Transport).Clone()}
	c.pool = mcppool.New(mcppool.Options{DB: c.db, Credentials: c.eng.Resolver(), Log: c.log,
		HTTPClient: &http.Client{Transport: c.rec}})
	if c.loop, err = mcpconformance.Listen(c.eng); err != nil {
		return err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	c.slug = "conformance-" + hex.EncodeToString(b[:])
	// The row is set up as an operator who lets the server's forms be
	// answered with their own defaults (config.elicitation); the platform's
	// default declines every form.
	if _, err := c.db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config, copy_source, published)
VALUES ($1, $1, 'http', $2, 'none', '{"elicitation":"defaults"}', 'admin', false)`, c.slug, c.url); err != nil {
		return store.Map(err)
	}
	c.conn, err = c.eng.EnsureConnection(ctx, c.slug, "platform", nil)
	return err
}

// close ends the sessions and deletes the scratch catalog row (its
// connection, credential and pending logins go with it).
func (c *client) close() {
	if c.pool != nil {
		c.pool.Close()
	}
	if c.loop != nil {
		_ = c.loop.Close()
	}
	if c.eng != nil {
		c.eng.Close()
	}
	if c.db != nil {
		if c.slug != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = c.db.Exec(ctx, `DELETE FROM mcp_servers WHERE slug = $1`, c.slug)
			cancel()
		}
		c.db.Close()
	}
}

// drive lists and calls the server's tools, logging in whenever the server
// answers with a 401 challenge or a 403 asking for more scope.
func (c *client) drive(ctx context.Context) error {
	logins := 0
	for {
		err := c.exercise(ctx)
		if err == nil {
			return nil
		}
		ch := c.rec.Take()
		switch {
		case ch.Status == 0:
			return err
		case ch.Status == http.StatusForbidden && !ch.InsufficientScope:
			return err
		case ch.Status == http.StatusForbidden && covered(ch.Scope, c.scope):
			return fmt.Errorf("the server refuses scope %q although the login holds it: %w", ch.Scope, err)
		case logins >= maxLogins:
			return fmt.Errorf("giving up after %d logins: %w", logins, err)
		}
		logins++
		c.log.Info("mcpclient: server asks for a login", "status", ch.Status, "scope", ch.Scope, "login", logins)
		if err := c.login(ctx, ch); err != nil {
			return fmt.Errorf("login: %w", err)
		}
	}
}

// schemaEcho is the suite's tool that wants another listed tool's input
// schema back as its "schema" argument, to see what the client kept of it.
const schemaEcho = "json_schema_echo"

// exercise lists the tools and calls each once with arguments shaped from
// its input schema.
func (c *client) exercise(ctx context.Context) error {
	tools, err := c.pool.List(ctx, c.conn.String())
	if err != nil {
		return err
	}
	c.log.Info("mcpclient: listed tools", "count", len(tools))
	for _, t := range tools {
		args, ok := c.calls[t.RemoteName]
		if !ok {
			args = argsFor(t.Schema)
		}
		if t.RemoteName == schemaEcho {
			args = echoArgs(tools)
		}
		out, err := c.pool.Call(ctx, c.conn.String(), t.RemoteName, args)
		if err != nil {
			return fmt.Errorf("call %s: %w", t.RemoteName, err)
		}
		c.log.Info("mcpclient: called tool", "tool", t.RemoteName, "result_bytes", len(out), "is_error", strings.HasPrefix(out, "ERROR: "))
	}
	return nil
}

// login prepares the catalog row from the server's metadata and runs the
// authorization-code flow through the engine.
func (c *client) login(ctx context.Context, ch mcpconformance.Challenge) error {
	var cfg []byte
	if err := c.db.QueryRow(ctx, `SELECT config FROM mcp_servers WHERE slug = $1`, c.slug).Scan(&cfg); err != nil {
		return store.Map(err)
	}
	p, err := mcpconformance.Prepare(ctx, c.disc, mcpconformance.PrepareInput{MCPURL: c.url, RedirectURI: c.loop.RedirectURI(),
		ClientName: "guilds conformance client", Challenge: ch, Client: c.preRegistered,
		ClientMetadataURL: c.clientMetadataURL, Config: cfg})
	if err != nil {
		return err
	}
	if _, err := c.db.Exec(ctx, `UPDATE mcp_servers SET auth = 'oauth', config = $2, updated_at = now() WHERE slug = $1`,
		c.slug, p.Config); err != nil {
		return store.Map(err)
	}
	c.log.Info("mcpclient: prepared login", "registered", p.OAuth.Registered, "auth_style", p.OAuth.AuthStyle,
		"scopes", strings.Join(p.OAuth.Scopes, " "), "fallback", p.Fallback)
	c.pool.Drop(c.conn.String())
	if err := c.loop.Authorize(ctx, c.hc, c.conn); err != nil {
		return err
	}
	c.pool.Drop(c.conn.String())
	c.scope = p.OAuth.Scopes
	return nil
}

// echoArgs passes the stored schema of the first other tool, as the pool
// keeps it, to the schema echo tool.
func echoArgs(tools []mcppool.Tool) json.RawMessage {
	for _, t := range tools {
		if t.RemoteName != schemaEcho {
			out, _ := json.Marshal(map[string]json.RawMessage{"schema": t.Schema})
			return out
		}
	}
	return json.RawMessage(`{}`)
}

// covered reports whether every scope of want is in have.
func covered(want string, have []string) bool {
	for _, s := range strings.Fields(want) {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return len(have) > 0
}
