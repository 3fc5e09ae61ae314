// Package store opens the PostgreSQL pool and maps driver errors to the
// sentinel errors handlers test with errors.Is.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/config"
)

var (
	// ErrNotFound: the row does not exist or is not visible to the caller.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique constraint refused the write.
	ErrConflict = errors.New("conflict")
	// ErrInvalidReference: a foreign key points at nothing.
	ErrInvalidReference = errors.New("invalid reference")
)

// DB is what both a pool and a transaction offer, so store functions work in either.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Open connects to PostgreSQL and checks the connection.
func Open(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %s", Redact(err.Error()))
	}
	sizePool(cfg, databaseURL)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, unreachable(databaseURL, err)
	}
	return pool, nil
}

// EnsureDatabase creates the database named in databaseURL when it does not exist,
// connecting to the server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %s", Redact(err.Error()))
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return unreachable(databaseURL, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	// Created concurrently by another process: PostgreSQL answers 42P04 when it sees the
	// other database, or a unique violation on its catalog when both inserts race.
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || (pgErr.Code == "23505" && pgErr.ConstraintName == "pg_database_datname_index")) {
		return nil
	}
	return err
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, fn)
}

// InOneTx runs fn in one transaction on db: a pool's or a connection's own,
// or a savepoint in the transaction db already is, so that fn's writes land
// together or not at all whoever calls it.
func InOneTx(ctx context.Context, db DB, fn func(DB) error) error {
	switch b := db.(type) {
	case interface {
		Begin(context.Context) (pgx.Tx, error)
	}:
		return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error { return fn(tx) })
	case interface {
		InTx(context.Context, func(pgx.Tx) error) error
	}:
		return b.InTx(ctx, func(tx pgx.Tx) error { return fn(tx) })
	}
	return fmt.Errorf("store: a %T cannot open a transaction", db)
}

// Map turns driver errors into the package's sentinel errors, keeping the original wrapped.
func Map(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return &constraintError{sentinel: ErrConflict, name: pgErr.ConstraintName}
		case "23503":
			return &constraintError{sentinel: ErrInvalidReference, name: pgErr.ConstraintName}
		case "22P02": // invalid_text_representation, e.g. a malformed uuid
			return ErrNotFound
		}
	}
	return err
}

// constraintError is ErrConflict or ErrInvalidReference with the name of the constraint
// that refused the write, so that the API can say which rule was broken.
type constraintError struct {
	sentinel error
	name     string
}

func (e *constraintError) Error() string { return e.sentinel.Error() + ": " + e.name }
func (e *constraintError) Unwrap() error { return e.sentinel }

// Constraint is the name of the constraint behind an error from Map, or "" when there is none.
func Constraint(err error) string {
	var ce *constraintError
	if errors.As(err, &ce) {
		return ce.name
	}
	return ""
}

// Redact hides the password of a connection URL or key=value DSN for messages.
func Redact(databaseURL string) string { return config.Redact(databaseURL) }

// unreachable says, on one line, which database could not be reached and what to set.
func unreachable(databaseURL string, err error) error {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	return fmt.Errorf("PostgreSQL at %s is not reachable (set DATABASE_URL): %s", Redact(databaseURL), Redact(msg))
}
