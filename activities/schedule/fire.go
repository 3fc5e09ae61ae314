// Package schedule holds the activities of schedule firings: creating the
// schedule-triggered run of a wake-up (once per firing, however often the
// activity is retried) and recording a window's next wake-up.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
)

// Registered activity names; they never change with Go renames.
const (
	FireName       = "schedule_fire"
	RecordNextName = "schedule_record_next"
)

// Deps are what the activities need.
type Deps struct {
	DB *pgxpool.Pool
	// Models resolves the agent's model at firing, as a direct run's start
	// does; nil stores the agent's model as written.
	Models *models.Resolver
	Log    *slog.Logger
}

// Activities are the schedule activities; build them with New.
type Activities struct{ d Deps }

// New builds the activities.
func New(d Deps) *Activities {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Activities{d: d}
}

// Reasons a firing started no run.
const (
	SkipDeleted = "the schedule was deleted"
	SkipLive    = "the schedule's previous run is still going"
)

// FireInput is one wake-up. Key is unique to the firing (the workflow id of
// the firing), so retries and replays find the run it already created.
type FireInput struct {
	ScheduleID string    `json:"schedule_id"`
	Key        string    `json:"key"`
	Due        time.Time `json:"due"`
	// Next is the wake-up after this one when the caller knows it (a
	// window); for a cron schedule it is computed from the expression.
	Next *time.Time `json:"next,omitempty"`
}

// FireOutput says which run the firing started, or why none.
type FireOutput struct {
	RunID          string `json:"run_id,omitempty"`
	AgentID        string `json:"agent_id,omitempty"`
	GuildID        string `json:"guild_id,omitempty"`
	OrganisationID string `json:"organisation_id,omitempty"`
	AgentName      string `json:"agent_name,omitempty"`
	Skipped        string `json:"skipped,omitempty"`
}

// Fire creates the schedule-triggered run of a wake-up: a queued run whose
// opening message is the schedule's instruction, and the firing row naming
// it, in one transaction. A deleted schedule, or one whose previous run is
// still going, starts nothing (overlap skip); so does an agent whose model
// no key serves, with the reason stored on the firing. The paused flag is not
// checked here: a paused Schedule or window does not fire, and a trigger
// (API or CLI) is an explicit wish to run it once.
func (a *Activities) Fire(ctx context.Context, in FireInput) (FireOutput, error) {
	var out FireOutput
	err := store.InTx(ctx, a.d.DB, func(tx pgx.Tx) error {
		var err error
		out, err = a.fire(ctx, tx, in)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		// A concurrent attempt of the same firing committed first.
		f, ferr := schedules.FindFiring(ctx, a.d.DB, in.Key)
		if ferr != nil {
			return FireOutput{}, ferr
		}
		return a.outputOf(ctx, f)
	}
	if err == nil && out.Skipped != "" {
		a.d.Log.Info("schedule firing skipped", "schedule_id", in.ScheduleID, "reason", out.Skipped)
	}
	return out, err
}

func (a *Activities) fire(ctx context.Context, tx pgx.Tx, in FireInput) (FireOutput, error) {
	if f, err := schedules.FindFiring(ctx, tx, in.Key); err == nil {
		return a.outputOf(ctx, f)
	} else if !errors.Is(err, store.ErrNotFound) {
		return FireOutput{}, err
	}
	s, err := schedules.Get(ctx, tx, in.ScheduleID)
	if errors.Is(err, store.ErrNotFound) {
		return FireOutput{Skipped: SkipDeleted}, nil
	}
	if err != nil {
		return FireOutput{}, err
	}
	// Lock the row so that two firings of one schedule start one run.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM schedules WHERE id = $1 FOR UPDATE`, s.ID); err != nil {
		return FireOutput{}, store.Map(err)
	}
	skip := func(reason string) (FireOutput, error) {
		return FireOutput{Skipped: reason}, schedules.RecordFiring(ctx, tx, schedules.Firing{Key: in.Key, ScheduleID: s.ID, DueAt: in.Due, Skipped: reason})
	}
	live, err := schedules.LastRunLive(ctx, tx, s.ID)
	if err != nil {
		return FireOutput{}, err
	}
	if live {
		return skip(SkipLive)
	}
	agent, err := orgs.LoadAgent(ctx, tx, s.AgentID)
	if err != nil {
		return FireOutput{}, err
	}
	if reach, err := budgets.Check(ctx, tx, budgets.Subject{OrganisationID: agent.OrganisationID, GuildID: agent.GuildID,
		AgentID: agent.ID}, budgets.ForStart, time.Now()); err != nil {
		return FireOutput{}, err
	} else if reach != nil {
		return skip("no run: " + reach.Message())
	}
	model := agent.Model
	if a.d.Models != nil {
		t, err := a.d.Models.Resolve(ctx, tx, agent.OrganisationID, agent.Model)
		if err != nil {
			return skip(fmt.Sprintf("no run: %v", err))
		}
		model = t.Qualified()
	}
	r, err := runs.Create(ctx, tx, runs.NewRun{AgentID: agent.ID, GuildID: agent.GuildID, OrganisationID: agent.OrganisationID,
		Trigger: runs.TriggerSchedule, Model: model, Budget: runs.DefaultBudget, Message: s.Opening()})
	if err != nil {
		return FireOutput{}, err
	}
	if err := schedules.RecordFiring(ctx, tx, schedules.Firing{Key: in.Key, ScheduleID: s.ID, RunID: &r.ID, DueAt: in.Due}); err != nil {
		return FireOutput{}, err
	}
	next := in.Next
	if s.Kind == schedules.KindCron {
		if c, err := s.CronSpec(); err == nil {
			if n, ok := c.Next(time.Now()); ok {
				next = &n
			}
		}
	}
	if err := schedules.RecordRun(ctx, tx, s.ID, r.ID, in.Due, next); err != nil {
		return FireOutput{}, err
	}
	return FireOutput{RunID: r.ID, AgentID: agent.ID, GuildID: agent.GuildID, OrganisationID: agent.OrganisationID, AgentName: agent.Name}, nil
}

// outputOf rebuilds the output of a firing already stored.
func (a *Activities) outputOf(ctx context.Context, f schedules.Firing) (FireOutput, error) {
	if f.RunID == nil {
		return FireOutput{Skipped: f.Skipped}, nil
	}
	r, err := runs.Load(ctx, a.d.DB, *f.RunID)
	if err != nil {
		return FireOutput{}, err
	}
	agent, err := orgs.LoadAgent(ctx, a.d.DB, r.AgentID)
	if err != nil {
		return FireOutput{}, err
	}
	return FireOutput{RunID: r.ID, AgentID: r.AgentID, GuildID: r.GuildID, OrganisationID: r.OrganisationID, AgentName: agent.Name}, nil
}

// RecordNextInput is a window's next wake-up (nil while paused or unknown).
type RecordNextInput struct {
	ScheduleID string     `json:"schedule_id"`
	Next       *time.Time `json:"next"`
}

// RecordNext stores a window's next wake-up; a deleted schedule is ignored.
func (a *Activities) RecordNext(ctx context.Context, in RecordNextInput) error {
	return schedules.SetNext(ctx, a.d.DB, in.ScheduleID, in.Next)
}
