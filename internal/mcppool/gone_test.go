package mcppool_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// replica is one process's engine and pool on the shared Postgres (and,
// unless rdb is nil, the shared Redis).
type replica struct {
	eng  *connectors.Engine
	pool *mcppool.Pool
}

func newReplica(t *testing.T, db *pgxpool.Pool, keys *secret.Keyring, slug string, rdb *redis.Client, timing connectors.Timing) replica {
	t.Helper()
	eng, err := connectors.New(context.Background(), connectors.Options{DB: db, Keyring: keys, Redis: rdb,
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID(slug)}}, Logger: slog.New(slog.DiscardHandler), Timing: timing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)
	return replica{eng: eng, pool: p}
}

// replicaShared is what replicas share beside Postgres: a keyring and Redis.
func replicaShared(t *testing.T) (*secret.Keyring, *redis.Client) {
	t.Helper()
	entry, _ := secret.GenerateKey("k1")
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := connectors.NewRedisClient("redis://127.0.0.1:6379/5")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return keys, rdb
}

// A login deleted through one replica is refused by the others at their next
// call, with no call reaching the server: one that hears the invalidation
// and one without Redis, which never hears it. Deleting the catalog row
// (which cascades to its logins) is refused alike.
func TestDeletedLoginIsRefusedEverywhere(t *testing.T) {
	for _, how := range []string{"login", "server"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			db := testdb.New(t)
			srv := newHeaderRecorder(t)
			slug := "gone" + how
			id := addConnection(t, db, slug, srv.URL, "token", `{}`)
			keys, rdb := replicaShared(t)
			a := newReplica(t, db, keys, slug, rdb, connectors.Timing{})
			b := newReplica(t, db, keys, slug, rdb, connectors.Timing{})
			c := newReplica(t, db, keys, slug, nil, connectors.Timing{}) // misses every invalidation
			if _, err := a.eng.ConnectKey(ctx, uuid.MustParse(id), map[string]string{"token": "key-gone-0123456789"}); err != nil {
				t.Fatal(err)
			}
			var heard []func()
			for _, r := range []replica{b, c} {
				heard = append(heard, hearing(t, db, r.pool))
				if _, err := r.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
					t.Fatalf("call before the delete: %v", err)
				}
			}

			// Delete as the API does: the row (in its transaction), then a's
			// session and every replica's cached credential.
			switch how {
			case "login":
				if err := connections.DeleteConnection(ctx, db, access.Principal{Admin: true}, id); err != nil {
					t.Fatal(err)
				}
			case "server":
				// The cascade's logins announced in its transaction.
				err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
					ids, err := connections.ConnectionsOfServer(ctx, tx, slug)
					if err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, `DELETE FROM mcp_servers WHERE slug = $1`, slug); err != nil {
						return err
					}
					return connstore.Announce(ctx, tx, ids)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			a.pool.Drop(id)
			a.eng.Forget(ctx, uuid.MustParse(id))
			// Each pool's next call comes once it has heard of the delete.
			for _, synced := range heard {
				synced()
			}

			// A closed session's DELETE may reach it; no call may.
			before := srv.calls()
			for name, r := range map[string]replica{"with redis": b, "without redis": c} {
				_, err := r.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`))
				if !errors.Is(err, connectors.ErrUnknownConnection) {
					t.Fatalf("%s: call after the delete: %v", name, err)
				}
				if _, err := r.eng.Resolver().Token(ctx, uuid.MustParse(id)); !errors.Is(err, connectors.ErrUnknownConnection) {
					t.Fatalf("%s: the resolver still serves the deleted login: %v", name, err)
				}
			}
			if after := srv.calls(); after != before {
				t.Fatalf("%d requests reached the server after the delete", after-before)
			}
		})
	}
}

// A login removed by a cascade (its catalog row deleted) has its open
// session closed by the pool's sweep, without any call or message.
func TestSweepClosesSessionsOfCascadedLogins(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	srv := newHeaderRecorder(t)
	id := addConnection(t, db, "sweepme", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, SweepEvery: -1})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	// The first session of a handshake-era server is dialled twice (the
	// second time with its GET stream, era.go): the first one's DELETE counts
	// from here.
	base := srv.deletes()
	if err := p.Sweep(ctx); err != nil || srv.deletes() != base {
		t.Fatalf("a live session was swept: %v, %d DELETEs", err, srv.deletes()-base)
	}
	if _, err := db.Exec(ctx, `DELETE FROM mcp_servers WHERE slug = 'sweepme'`); err != nil {
		t.Fatal(err)
	}
	if err := p.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.deletes() != base+1 {
		t.Fatalf("the session of the cascaded login was not closed (%d DELETEs)", srv.deletes()-base)
	}
}
