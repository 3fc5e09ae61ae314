// Package testdb gives each test a fresh, fully migrated PostgreSQL database.
//
// A template database is migrated once per migration set (named by a hash of the
// migration files) and each test gets a copy via CREATE DATABASE … TEMPLATE, which
// takes a fraction of a second. Set TEST_DATABASE_URL to point at another server;
// the default is the local trust-auth server.
package testdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/migrations"
)

// DefaultURL is the server tests use when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var counter atomic.Int64

// ServerURL is the URL of the administrative database of the test server.
func ServerURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// URL creates a fresh migrated database and returns its URL; it is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("testdb: PostgreSQL not reachable at TEST_DATABASE_URL (%s): %v", ServerURL(), err)
	}
	defer func() { _ = admin.Close(ctx) }()
	tmpl, err := template(ctx, admin)
	if err != nil {
		t.Fatalf("testdb: template: %v", err)
	}
	name := fmt.Sprintf("guilds_t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, counter.Add(1))
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl)); err != nil {
		t.Fatalf("testdb: create %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			return
		}
		defer func() { _ = c.Close(ctx) }()
		// Best effort: a database left behind is named after the test and dropped by its next run.
		_, _ = c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return withDatabase(ServerURL(), name)
}

// New returns a pool on a fresh migrated database, closed and dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url := URL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(pool.Close) // registered after the drop, so it runs first
	return pool
}

// template returns the name of a migrated template database, creating it when needed.
func template(ctx context.Context, admin *pgx.Conn) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "guilds_tmpl_" + sum[:12]
	// Serialise template creation across test binaries running in parallel.
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(7163)"); err != nil {
		return "", err
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7163)") //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname=$1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_build"
	// A leftover of an interrupted build; if it cannot go, CREATE below says why.
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, withDatabase(ServerURL(), building))
	if err != nil {
		return "", err
	}
	_, err = migrate.Up(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, name)); err != nil {
		return "", err
	}
	return name, nil
}

func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func withDatabase(serverURL, name string) string {
	base, query, _ := strings.Cut(serverURL, "?")
	i := strings.LastIndex(base, "/")
	if i < len("postgres://") {
		base += "/"
		i = len(base) - 1
	}
	u := base[:i+1] + name
	if query != "" {
		u += "?" + query
	}
	return u
}
