package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/worker"
)

// The worker exactly as `guilds worker` and `guilds dev` assemble it: every
// workflow and activity under an explicit name, none colliding. Two
// activities once shared a name and the assembled worker could not finish an
// OAuth connect while each package's own test passed.
func TestAssembledWorkerRegistrations(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": testdb.URL(t), "GUILDS_DATA_DIR": t.TempDir()}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := openPlatform(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if err := p.startConnectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := worker.Check(p.registrations()...); err != nil {
		t.Fatal(err)
	}
}
