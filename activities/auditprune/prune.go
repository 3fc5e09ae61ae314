// Package auditprune is the activity of the daily audit prune: it deletes
// the audit events older than the retention setting
// (GUILDS_AUDIT_RETENTION_DAYS).
package auditprune

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/audit"
)

// PruneName is the registered activity name; it never changes with Go renames.
const PruneName = "audit_prune"

// Activities hold what the prune needs.
type Activities struct {
	DB *pgxpool.Pool
	// Retention is how long an event is kept (config.AuditRetention).
	Retention time.Duration
	Log       *slog.Logger
}

// Prune deletes the events older than the retention, measured from now, and
// reports how many went. The cut is taken from the worker's clock when the
// activity runs, so a retried prune never deletes what the first attempt
// would have kept.
func (a *Activities) Prune(ctx context.Context) (int64, error) {
	if a.Retention <= 0 {
		return 0, errors.New("audit prune: no retention is set")
	}
	before := time.Now().Add(-a.Retention)
	n, err := audit.Prune(ctx, a.DB, before)
	if err != nil {
		return n, err
	}
	if a.Log != nil {
		a.Log.InfoContext(ctx, "audit: pruned old events", "deleted", n, "before", before.UTC().Format(time.RFC3339))
	}
	return n, nil
}
