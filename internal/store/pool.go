package store

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrBusy: every pooled connection stayed in use for the whole acquire bound.
// The API answers it with 503, so a saturated pool refuses quickly instead of
// queueing requests until their clients give up.
var ErrBusy = errors.New("the database is busy: every connection is in use; try again shortly")

// AcquireTimeout bounds the wait for a pooled connection (Bounded's default).
const AcquireTimeout = 5 * time.Second

// PoolSize is the connection count when DATABASE_URL does not set
// pool_max_conns: pgxpool's own default (max(4, cores)) starves as soon as a
// few requests wait on remote services.
func PoolSize() int32 { return int32(max(8, 4*runtime.NumCPU())) } //nolint:gosec // G115: a CPU count times four fits in int32

// sizePool applies PoolSize unless the URL chose a size.
func sizePool(cfg *pgxpool.Config, databaseURL string) {
	if !strings.Contains(databaseURL, "pool_max_conns") {
		cfg.MaxConns = PoolSize()
	}
}

// Bounded is a pool whose every statement waits at most Wait for a
// connection (ErrBusy after that) and releases it as soon as the statement
// is done, so no caller holds a connection across anything else.
type Bounded struct {
	Pool *pgxpool.Pool
	Wait time.Duration // 0: AcquireTimeout
}

func (b Bounded) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	wait := b.Wait
	if wait <= 0 {
		wait = AcquireTimeout
	}
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	conn, err := b.Pool.Acquire(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, ErrBusy
	}
	return conn, err
}

// InTx runs fn in one transaction on one bounded-acquired connection.
func (b Bounded) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	conn, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return pgx.BeginFunc(ctx, conn, fn)
}

func (b Bounded) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	conn, err := b.acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer conn.Release()
	return conn.Exec(ctx, sql, args...)
}

func (b Bounded) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	conn, err := b.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		conn.Release()
		return nil, err
	}
	return &releasingRows{Rows: rows, conn: conn}, nil
}

func (b Bounded) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	conn, err := b.acquire(ctx)
	if err != nil {
		return errRow{err}
	}
	return &releasingRow{row: conn.QueryRow(ctx, sql, args...), conn: conn}
}

// releasingRows gives the connection back when the rows are closed or exhausted.
type releasingRows struct {
	pgx.Rows
	conn *pgxpool.Conn
}

func (r *releasingRows) Close() {
	r.Rows.Close()
	if r.conn != nil {
		r.conn.Release()
		r.conn = nil
	}
}

func (r *releasingRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

type releasingRow struct {
	row  pgx.Row
	conn *pgxpool.Conn
}

func (r *releasingRow) Scan(dest ...any) error {
	defer r.conn.Release()
	return r.row.Scan(dest...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
