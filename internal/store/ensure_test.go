package store_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// Several processes creating the same scratch database at once (the
// conformance suite starts its clients in parallel) all succeed: the loser of
// the race sees either "already exists" or a unique violation on the catalog.
func TestEnsureDatabaseToleratesConcurrentCreators(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u, err := url.Parse(testdb.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("guilds_t_ensure_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	u.Path = "/" + name
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), testdb.ServerURL())
		if err != nil {
			return
		}
		defer func() { _ = c.Close(context.Background()) }()
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	const creators = 8
	start := make(chan struct{})
	errs := make(chan error, creators)
	var wg sync.WaitGroup
	for range creators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- store.EnsureDatabase(ctx, u.String())
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent creator failed: %v", err)
		}
	}
}
