package run

import (
	"context"
	"sync"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// snapshotCacheSize bounds the snapshots a worker keeps: about one per run in
// flight on it (a few KiB to a few hundred KiB each, the offered tools'
// schemas).
const snapshotCacheSize = 1024

// snapshotCache keeps the snapshots of the runs this worker has served. A
// snapshot is written once, at run start, and never changed (runs.SaveSnapshot
// is the only writer), so a copy read once stays right for the whole run:
// every tool call and model turn after the first skips one query and the
// decoding of every offered tool's schema. Callers only read what it returns.
type snapshotCache struct {
	mu sync.Mutex
	m  map[string]runs.Snapshot
}

// snapshot returns the run's snapshot, from the cache when it has it.
func (a *Activities) snapshot(ctx context.Context, db store.DB, runID string) (runs.Snapshot, error) {
	c := &a.snaps
	c.mu.Lock()
	s, ok := c.m[runID]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := runs.SnapshotOf(ctx, db, runID)
	if err != nil {
		return runs.Snapshot{}, err // not stored yet is not cached either
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]runs.Snapshot{}
	}
	if len(c.m) >= snapshotCacheSize {
		for k := range c.m { // any one: a run that is gone, most likely
			delete(c.m, k)
			break
		}
	}
	c.m[runID] = s
	return s, nil
}
