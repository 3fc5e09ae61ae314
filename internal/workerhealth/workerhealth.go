// Package workerhealth holds what each worker last reported about its
// sandbox engine (table worker_health), so the API process, which has no
// engine of its own, can say whether code tools can run.
package workerhealth

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// Every is how often a worker reports; a report older than Stale is not
// believed (the worker stopped or lost the database).
const (
	Every = 30 * time.Second
	Stale = 3 * Every
)

// Report is one worker's answer.
type Report struct {
	WorkerID    string
	Hostname    string
	Driver      string
	EngineOK    bool
	EngineError string
}

// Write records r as the worker's latest report.
func Write(ctx context.Context, db store.DB, r Report) error {
	_, err := db.Exec(ctx, `INSERT INTO worker_health (worker_id, hostname, sandbox_driver, engine_ok, engine_error, reported_at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (worker_id) DO UPDATE SET hostname = $2, sandbox_driver = $3, engine_ok = $4, engine_error = $5, reported_at = now()`,
		r.WorkerID, r.Hostname, r.Driver, r.EngineOK, truncate(r.EngineError, 500))
	return err
}

// Engine states.
const (
	EngineWorking = "working" // a fresh report from a worker whose engine answered
	EngineDown    = "down"    // fresh reports, none with a working engine
	EngineUnknown = "unknown" // no fresh report: no worker runs, or none can write
)

// State is what the box's workers say about code tools.
type State struct {
	Engine     string     `json:"engine"`
	Driver     string     `json:"driver,omitempty"`
	Error      string     `json:"error,omitempty"`
	ReportedAt *time.Time `json:"reported_at,omitempty"`
	// Advice is what the operator does about it, empty when working.
	Advice string `json:"advice,omitempty"`
}

// Engine reads the freshest reports: working if any worker's engine answers.
func Engine(ctx context.Context, db store.DB) (State, error) {
	var s State
	var at time.Time
	var ok bool
	err := db.QueryRow(ctx, `SELECT sandbox_driver, engine_ok, engine_error, reported_at FROM worker_health
		WHERE reported_at > now() - make_interval(secs => $1) ORDER BY engine_ok DESC, reported_at DESC LIMIT 1`,
		Stale.Seconds()).Scan(&s.Driver, &ok, &s.Error, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return State{Engine: EngineUnknown,
			Advice: "No worker has reported lately: start one (guilds worker, or make run) and code tools become available once its sandbox engine answers."}, nil
	}
	if err != nil {
		return State{}, err
	}
	s.ReportedAt = &at
	if ok {
		s.Engine, s.Error = EngineWorking, ""
		return s, nil
	}
	s.Engine = EngineDown
	s.Advice = "The worker's sandbox engine does not answer: start it (Podman's or Docker's service) and point DOCKER_HOST at it on the worker; code tools come back within a minute."
	return s, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
