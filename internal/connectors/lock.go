package connectors

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The cross-replica refresh lock has two parts, both taken by the refresher:
//
//   - a Redis lease (SET NX PX) that keeps waiters off Postgres and ends by
//     itself when its holder dies;
//   - a Postgres session advisory lock (pg_try_advisory_lock), which is what
//     still excludes a second refresher when Redis is down, failed over or
//     lost the lease while its holder is alive. Postgres drops it the moment
//     the holder's connection dies.
//
// Neither is trusted alone for the write: the UPDATE of the credential is
// conditional on the version read under the lock (the fence).

var errLockBusy = errors.New("connectors: refresh lock held elsewhere")

// advisoryClass is the first key of the two-key advisory lock ("crlk").
const advisoryClass int32 = 0x63726c6b

func advisoryKey(id uuid.UUID) int32 {
	var k uint32
	for i := 0; i < 16; i += 4 {
		k ^= uint32(id[i])<<24 | uint32(id[i+1])<<16 | uint32(id[i+2])<<8 | uint32(id[i+3]) //nolint:gosec // G602: i+3 < 16, the array's length
	}
	return int32(k)
}

type heldLock struct {
	owner     string // Redis lease owner token; empty when Redis was skipped
	conn      *pgxpool.Conn
	keepLease bool // leave the Redis lease to expire instead of deleting it
}

func (r *Resolver) lock(ctx context.Context, id uuid.UUID) (*heldLock, error) {
	lk := &heldLock{}
	if r.redisUsable() {
		owner := newOwnerToken()
		rctx, cancel := redisCtx(ctx)
		ok, err := r.rdb.SetNX(rctx, lockKeyPrefix+id.String(), owner, r.t.Lease).Result()
		cancel()
		switch {
		case err != nil:
			r.redisFailed("lock", err)
		case !ok:
			return nil, errLockBusy
		default:
			lk.owner = owner
		}
	}
	conn, err := r.db.Acquire(ctx)
	if err != nil {
		r.releaseLease(lk, id)
		return nil, err
	}
	var got bool
	err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", advisoryClass, advisoryKey(id)).Scan(&got)
	if err != nil || !got {
		if err != nil {
			// Unknown whether the lock was taken: drop the session to be sure.
			_ = conn.Conn().Close(context.Background())
		}
		conn.Release()
		r.releaseLease(lk, id)
		if err != nil {
			return nil, err
		}
		return nil, errLockBusy
	}
	lk.conn = conn
	return lk, nil
}

func (r *Resolver) unlock(lk *heldLock, id uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := lk.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", advisoryClass, advisoryKey(id)); err != nil {
		_ = lk.conn.Conn().Close(ctx)
	}
	lk.conn.Release()
	if !lk.keepLease {
		r.releaseLease(lk, id)
	}
}

func (r *Resolver) releaseLease(lk *heldLock, id uuid.UUID) {
	if lk.owner == "" || r.rdb == nil {
		return
	}
	ctx, cancel := redisCtx(context.Background())
	defer cancel()
	err := releaseLock.Run(ctx, r.rdb, []string{lockKeyPrefix + id.String()}, lk.owner).Err()
	r.redisFailed("unlock", err)
}
