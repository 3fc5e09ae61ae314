// Package schedules is the six schedule tools: an agent creates cron and
// daily-window schedules of its own, lists them, pauses, resumes and deletes
// them. The grants catalog offers them on direct and group-chat runs only,
// so a schedule-triggered run cannot schedule more of itself.
package schedules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Tool names.
const (
	ToolCreateCron   = "schedule_create_cron"
	ToolCreateWindow = "schedule_create_window"
	ToolList         = "schedule_list"
	ToolPause        = "schedule_pause"
	ToolResume       = "schedule_resume"
	ToolDelete       = "schedule_delete"
)

// Names lists the six tools.
var Names = []string{ToolCreateCron, ToolCreateWindow, ToolList, ToolPause, ToolResume, ToolDelete}

// Manager keeps a schedule's row and its Temporal side together
// (workflows/schedule.Manager).
type Manager interface {
	Create(ctx context.Context, db store.DB, in schedules.New) (schedules.Schedule, error)
	Pause(ctx context.Context, db store.DB, s schedules.Schedule) (schedules.Schedule, error)
	Resume(ctx context.Context, db store.DB, s schedules.Schedule) (schedules.Schedule, error)
	Delete(ctx context.Context, db store.DB, s schedules.Schedule) error
}

// Deps are what the tools need. Without a Manager (a process with no
// Temporal) the tools are declared and a call says why it cannot run.
type Deps struct {
	DB      *pgxpool.Pool
	Log     *slog.Logger
	Manager Manager
}

// ErrNoManager is the result of a call in a process that cannot reach Temporal.
var ErrNoManager = errors.New("schedules are not available in this process: it has no Temporal connection")

var (
	textProps = `"description":{"type":"string","description":"required one-line label, at most 400 characters"},
		"instruction":{"type":"string","description":"optional markdown, at most 2000 characters: the opening message of each run the schedule starts (the description when omitted)"}`
	idSchema = json.RawMessage(`{"type":"object","properties":{
		"id":{"type":"string","description":"the schedule's id, as schedule_list or the create call gave it"}},
		"required":["id"],"additionalProperties":false}`)
)

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "schedules", Group: "Schedules", Gate: tools.GateBinding,
	Triggers: []tools.Trigger{tools.TriggerDirect, tools.TriggerGroup}}

// Register adds the six tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	fam.Register(tools.Tool{
		Name: ToolCreateCron,
		Description: "Wake yourself up on a cron schedule. cron is a 5-field UTC expression (minute hour day-of-month month day-of-week); " +
			"consecutive wake-ups must be at least 5 minutes apart. Each wake-up starts a run whose opening message is instruction. Answers with the schedule's id.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"cron":{"type":"string","description":"5-field UTC cron expression, e.g. 0 9 * * 1-5"},` + textProps + `},
			"required":["cron","description"],"additionalProperties":false}`),
		Handler: d.create(schedules.KindCron),
	})
	fam.Register(tools.Tool{
		Name: ToolCreateWindow,
		Description: "Wake yourself up at random times within a daily window: up to max_wakes times a day between start and end " +
			"in timezone, at least 5 minutes apart. A window that crosses midnight writes its end with +1 (start 22:00, end 02:00+1). " +
			"Each wake-up starts a run whose opening message is instruction. Answers with the schedule's id.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"timezone":{"type":"string","description":"IANA time zone, e.g. Europe/Paris"},
			"start":{"type":"string","description":"HH:MM, local time the window opens"},
			"end":{"type":"string","description":"HH:MM, local time the window closes; HH:MM+1 when that is the next day"},
			"max_wakes":{"type":"integer","description":"wake-ups per day, from 1 to 48"},` + textProps + `},
			"required":["timezone","start","end","max_wakes","description"],"additionalProperties":false}`),
		Handler: d.create(schedules.KindWindow),
	})
	fam.Register(tools.Tool{
		Name:        ToolList,
		Description: "List your schedules with each one's id, state (active or paused), next_run_at and description.",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Idempotent:  true, Quick: true,
		Handler: d.list,
	})
	fam.Register(tools.Tool{Name: ToolPause, Description: "Pause one of your schedules: it stops firing until resumed.",
		Schema: idSchema, Idempotent: true, Handler: d.change(ToolPause)})
	fam.Register(tools.Tool{Name: ToolResume, Description: "Resume a paused schedule; its next_run_at is recomputed from now.",
		Schema: idSchema, Idempotent: true, Handler: d.change(ToolResume)})
	fam.Register(tools.Tool{Name: ToolDelete, Description: "Delete one of your schedules for good.",
		Schema: idSchema, Handler: d.change(ToolDelete)})
}

func (d Deps) ready(call tools.Call) error {
	if call.AgentID == "" {
		return errors.New("schedules belong to an agent: this call has no agent id")
	}
	if d.Manager == nil || d.DB == nil {
		return ErrNoManager
	}
	return nil
}

func (d Deps) create(kind schedules.Kind) tools.Handler {
	return func(ctx context.Context, call tools.Call) (string, error) {
		if err := d.ready(call); err != nil {
			return "", err
		}
		var in struct {
			Cron, Timezone, Start, End, Description, Instruction string
			MaxWakes                                             int `json:"max_wakes"`
		}
		if err := json.Unmarshal(call.Args, &in); err != nil {
			return "", err
		}
		n := schedules.New{AgentID: call.AgentID, Kind: kind, Cron: in.Cron, Timezone: in.Timezone, Start: in.Start, End: in.End,
			MaxWakes: in.MaxWakes, Description: in.Description, Instruction: in.Instruction, CreatedByRun: call.RunID}
		if err := d.origin(ctx, call, &n); err != nil {
			return "", err
		}
		var s schedules.Schedule
		err := store.InTx(ctx, d.DB, func(tx pgx.Tx) error {
			var err error
			s, err = d.Manager.Create(ctx, tx, n)
			return err
		})
		if err != nil {
			return "", err
		}
		return "created schedule\n" + line(s), nil
	}
}

// ErrAnswersAnAgent refuses a schedule to a run that answers another
// agent's chat message: its wake-ups would post at the start of a fresh
// exchange, so two agents could keep arming each other past the hop bound.
var ErrAnswersAnAgent = errors.New("this run answers another agent's message, and a schedule it made could keep agents " +
	"waking each other without end: only a run an operator started, or one answering an operator's message, creates schedules")

// origin records where a group-chat run's schedule comes from, and refuses
// one to a run answering an agent.
func (d Deps) origin(ctx context.Context, call tools.Call, n *schedules.New) error {
	if call.RunID == "" {
		return nil
	}
	del, err := groupchat.DeliveryOfRun(ctx, d.DB, call.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // a direct run: an operator started it
	}
	if err != nil {
		return err
	}
	m, err := groupchat.Get(ctx, d.DB, del.MessageID)
	if err != nil {
		return err
	}
	if m.Author.Kind == groupchat.AuthorAgent {
		return ErrAnswersAnAgent
	}
	n.OriginMessageID, n.OriginHop = m.ID, m.Hop
	return nil
}

func (d Deps) list(ctx context.Context, call tools.Call) (string, error) {
	if call.AgentID == "" {
		return "", errors.New("schedules belong to an agent: this call has no agent id")
	}
	if d.DB == nil {
		return "", ErrNoManager
	}
	list, err := schedules.ListByAgent(ctx, d.DB, call.AgentID)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "no schedules", nil
	}
	lines := make([]string, len(list))
	for i, s := range list {
		lines[i] = line(s)
	}
	return strings.Join(lines, "\n"), nil
}

func (d Deps) change(tool string) tools.Handler {
	return func(ctx context.Context, call tools.Call) (string, error) {
		if err := d.ready(call); err != nil {
			return "", err
		}
		var in struct{ ID string }
		if err := json.Unmarshal(call.Args, &in); err != nil {
			return "", err
		}
		var out string
		err := store.InTx(ctx, d.DB, func(tx pgx.Tx) error {
			s, err := schedules.GetOfAgent(ctx, tx, call.AgentID, strings.TrimSpace(in.ID))
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("id: you have no schedule %q; schedule_list shows yours", in.ID)
			}
			if err != nil {
				return err
			}
			switch tool {
			case ToolPause:
				s, err = d.Manager.Pause(ctx, tx, s)
				out = "paused\n" + line(s)
			case ToolResume:
				s, err = d.Manager.Resume(ctx, tx, s)
				out = "resumed\n" + line(s)
			case ToolDelete:
				err = d.Manager.Delete(ctx, tx, s)
				out = "deleted schedule " + s.ID
			}
			return err
		})
		return out, err
	}
}

// line is one schedule as the tools show it.
func line(s schedules.Schedule) string {
	spec := fmt.Sprintf("cron %q (UTC)", s.Cron)
	if s.Kind == schedules.KindWindow {
		spec = fmt.Sprintf("window %s–%s %s, up to %d a day", s.Start, s.End, s.Timezone, s.MaxWakes)
	}
	next := "none"
	if s.NextRunAt != nil {
		next = s.NextRunAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("id: %s · %s · state: %s · next_run_at: %s · %s", s.ID, spec, s.State, next, s.Description)
}
