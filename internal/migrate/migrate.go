// Package migrate applies the embedded, numbered SQL migrations of package migrations.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/migrations"
)

// lockKey serialises concurrent migrators (several replicas starting at once).
const lockKey = 0x6775696c6473 // "guilds"

// Migration is one numbered step with its up and down SQL.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

// Status is a migration and, when applied, the time it was applied.
type Status struct {
	Migration
	AppliedAt *time.Time
}

// Load reads every migration from the embedded files, ordered by version.
func Load() ([]Migration, error) { return load(migrations.FS) }

func load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		name := e.Name()
		var dir string
		switch {
		case strings.HasSuffix(name, ".up.sql"):
			dir = "up"
		case strings.HasSuffix(name, ".down.sql"):
			dir = "down"
		default:
			continue
		}
		num, rest, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: want NNN_name.%s.sql", name, dir)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: version %q is not a number", name, num)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		m := byVersion[v]
		if m == nil {
			m = &Migration{Version: v, Name: strings.TrimSuffix(strings.TrimSuffix(rest, ".up.sql"), ".down.sql")}
			byVersion[v] = m
		}
		if dir == "up" {
			m.Up = string(body)
		} else {
			m.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		if m.Up == "" || m.Down == "" {
			return nil, fmt.Errorf("migration %03d_%s needs both an up and a down file", m.Version, m.Name)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Up applies every pending migration, each in its own transaction. It returns the versions applied.
func Up(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	all, err := Load()
	if err != nil {
		return nil, err
	}
	var applied []int
	err = withLock(ctx, pool, func(conn *pgxpool.Conn) error {
		done, err := appliedVersions(ctx, conn)
		if err != nil {
			return err
		}
		for _, m := range all {
			if _, ok := done[m.Version]; ok {
				continue
			}
			if err := runStep(ctx, conn, m, m.Up, true); err != nil {
				return err
			}
			applied = append(applied, m.Version)
		}
		return nil
	})
	return applied, err
}

// Down rolls back the newest `steps` applied migrations (all of them when steps <= 0).
func Down(ctx context.Context, pool *pgxpool.Pool, steps int) ([]int, error) {
	all, err := Load()
	if err != nil {
		return nil, err
	}
	var reverted []int
	err = withLock(ctx, pool, func(conn *pgxpool.Conn) error {
		done, err := appliedVersions(ctx, conn)
		if err != nil {
			return err
		}
		for i := len(all) - 1; i >= 0; i-- {
			if steps > 0 && len(reverted) == steps {
				break
			}
			m := all[i]
			if _, ok := done[m.Version]; !ok {
				continue
			}
			if err := runStep(ctx, conn, m, m.Down, false); err != nil {
				return err
			}
			reverted = append(reverted, m.Version)
		}
		return nil
	})
	return reverted, err
}

// List reports every known migration and whether it is applied.
func List(ctx context.Context, pool *pgxpool.Pool) ([]Status, error) {
	all, err := Load()
	if err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if err := ensureTable(ctx, conn); err != nil {
		return nil, err
	}
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(all))
	for _, m := range all {
		s := Status{Migration: m}
		if at, ok := done[m.Version]; ok {
			at := at
			s.AppliedAt = &at
		}
		out = append(out, s)
	}
	return out, nil
}

func withLock(ctx context.Context, pool *pgxpool.Pool, fn func(*pgxpool.Conn) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey) //nolint:errcheck
	if err := ensureTable(ctx, conn); err != nil {
		return err
	}
	return fn(conn)
}

func ensureTable(ctx context.Context, conn *pgxpool.Conn) error {
	_, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`)
	return err
}

func appliedVersions(ctx context.Context, conn *pgxpool.Conn) (map[int]time.Time, error) {
	rows, err := conn.Query(ctx, "SELECT version, applied_at FROM schema_migrations")
	if err != nil {
		return nil, err
	}
	done := map[int]time.Time{}
	for rows.Next() {
		var v int
		var at time.Time
		if err := rows.Scan(&v, &at); err != nil {
			return nil, err
		}
		done[v] = at
	}
	return done, rows.Err()
}

func runStep(ctx context.Context, conn *pgxpool.Conn, m Migration, sql string, up bool) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return err
		}
		if up {
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM schema_migrations WHERE version = $1", m.Version)
		return err
	})
	if err != nil {
		dir := "down"
		if up {
			dir = "up"
		}
		return fmt.Errorf("migration %03d_%s %s: %w", m.Version, m.Name, dir, err)
	}
	return nil
}
