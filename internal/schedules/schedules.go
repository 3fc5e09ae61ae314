// Package schedules is the schedules table: an agent's cron and daily-window
// wake-ups, with what each run it starts is told (the instruction). It is the
// source of truth for listing; the Temporal side (a Schedule per cron row, a
// workflow per window row) is kept in step by workflows/schedule.
package schedules

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Kind says how a schedule wakes its agent.
type Kind string

// Kinds of schedule.
const (
	KindCron   Kind = "cron"   // a 5-field UTC expression, run by a Temporal Schedule
	KindWindow Kind = "window" // random wake-ups in a daily window, run by a workflow
)

// State of a schedule as listed.
type State string

// States.
const (
	StateActive State = "active"
	StatePaused State = "paused"
)

// Text limits, in characters.
const (
	MaxDescription = 400
	MaxInstruction = 2000
)

// DefaultMaxPerAgent is how many schedules an agent may hold unless
// GUILDS_MAX_SCHEDULES_PER_AGENT says otherwise.
const DefaultMaxPerAgent = 20

// Schedule is one row, with the agent's guild and organisation.
type Schedule struct {
	ID             string     `json:"id"`
	AgentID        string     `json:"agent_id"`
	GuildID        string     `json:"guild_id"`
	OrganisationID string     `json:"organisation_id"`
	Kind           Kind       `json:"kind"`
	Cron           string     `json:"cron,omitempty"`
	Timezone       string     `json:"timezone,omitempty"`
	Start          string     `json:"start,omitempty"`
	End            string     `json:"end,omitempty"` // "HH:MM", or "HH:MM+1" on the next day
	MaxWakes       int        `json:"max_wakes,omitempty"`
	Description    string     `json:"description"`
	Instruction    string     `json:"instruction"`
	Paused         bool       `json:"paused"`
	State          State      `json:"state"`
	NextRunAt      *time.Time `json:"next_run_at"`
	LastRunAt      *time.Time `json:"last_run_at"`
	LastRunID      *string    `json:"last_run_id"`
	CreatedByRun   *string    `json:"created_by_run,omitempty"`
	CreatedByUser  *string    `json:"created_by_user,omitempty"`
	// OriginMessageID: the chat message the creating run answered (provenance).
	OriginMessageID *string   `json:"origin_message_id,omitempty"`
	OriginHop       int       `json:"origin_hop,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// Opening is the first message of a run the schedule starts: its
// instruction, or its description when it has none.
func (s Schedule) Opening() string {
	if s.Instruction != "" {
		return s.Instruction
	}
	return s.Description
}

// CronSpec parses the row's expression.
func (s Schedule) CronSpec() (Cron, error) { return ParseCron(s.Cron) }

// WindowSpec parses the row's window.
func (s Schedule) WindowSpec() (Window, error) {
	w, probs := parseWindow(s.Timezone, s.Start, s.End, s.MaxWakes)
	if err := probs.Err(); err != nil {
		return Window{}, err
	}
	return w, nil
}

// New is a schedule to create. CreatedByRun or CreatedByUser says who asked.
type New struct {
	AgentID     string
	Kind        Kind
	Cron        string
	Timezone    string
	Start       string
	End         string
	MaxWakes    int
	Description string
	Instruction string
	// Paused creates it paused (reconciliation and tests).
	Paused        bool
	CreatedByRun  string
	CreatedByUser string
	// OriginMessageID and OriginHop: the chat message the creating run
	// answered, and its hop (empty and 0 for an operator or a direct run).
	OriginMessageID string
	OriginHop       int
}

// Checked is a New that passed Check: the parsed spec and the first wake-up.
type Checked struct {
	New
	Cron   Cron
	Window Window
}

// Check validates every field, listing each problem under its field name.
func Check(in New) (Checked, error) {
	var probs validation.Problems
	in.Description = strings.TrimSpace(in.Description)
	in.Instruction = strings.TrimSpace(in.Instruction)
	probs.Check(in.AgentID != "", "agent_id", "is required")
	checkText(&probs, "description", in.Description, MaxDescription, true, true)
	checkText(&probs, "instruction", in.Instruction, MaxInstruction, false, false)
	out := Checked{New: in}
	switch in.Kind {
	case KindCron:
		in.Cron = strings.Join(strings.Fields(in.Cron), " ")
		c, err := ParseCron(in.Cron)
		if err == nil {
			err = c.CheckGap()
		}
		if err != nil {
			probs.Add("cron", "%s", err.Error())
		}
		out.Cron, out.New.Cron = c, c.String()
	case KindWindow:
		w, wp := parseWindow(in.Timezone, in.Start, in.End, in.MaxWakes)
		for _, p := range wp.list() {
			probs.Add(p.Field, "%s", p.Message)
		}
		out.Window = w
	default:
		probs.Add("kind", "must be cron or window")
	}
	if err := probs.Err(); err != nil {
		return Checked{}, err
	}
	return out, nil
}

func checkText(probs *validation.Problems, field, s string, limit int, oneLine, required bool) {
	switch n := utf8.RuneCountInString(s); {
	case !utf8.ValidString(s):
		probs.Add(field, "must be UTF-8 text")
	case s == "" && required:
		probs.Add(field, "is required")
	case n > limit:
		probs.Add(field, "is %d characters; at most %d are allowed", n, limit)
	case oneLine && strings.ContainsAny(s, "\r\n"):
		probs.Add(field, "must be one line")
	}
}

// windowProblems keeps the problems of a window so Check can merge them.
type windowProblems struct{ p []validation.Problem }

func (w *windowProblems) add(field, format string, args ...any) {
	w.p = append(w.p, validation.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}
func (w *windowProblems) list() []validation.Problem { return w.p }
func (w *windowProblems) Err() error {
	if len(w.p) == 0 {
		return nil
	}
	return &validation.Error{Problems: w.p}
}

func parseWindow(tz, start, end string, maxWakes int) (Window, *windowProblems) {
	probs := &windowProblems{}
	var w Window
	switch {
	case tz == "":
		probs.add("timezone", "is required: an IANA zone such as Europe/Paris or UTC")
	case tz == "Local" || strings.HasPrefix(tz, "/"):
		probs.add("timezone", "%q is not an IANA time zone name (such as Europe/Paris or UTC)", tz)
	default:
		loc, err := time.LoadLocation(tz)
		if err != nil {
			probs.add("timezone", "%q is not an IANA time zone name (such as Europe/Paris or UTC)", tz)
		}
		w.Location = loc
	}
	s, err := ParseClock(start)
	if err != nil {
		probs.add("start", "%s", err.Error())
	}
	endText, nextDay := strings.CutSuffix(end, "+1")
	e, err2 := ParseClock(endText)
	if err2 != nil {
		probs.add("end", "%s; a window that crosses midnight writes its end with +1, e.g. 02:00+1", err2.Error())
	}
	w.Start, w.End, w.NextDay, w.MaxWakes = s, e, nextDay, maxWakes
	if err == nil && err2 == nil {
		switch {
		case !nextDay && e < s:
			probs.add("end", "%s is before the start %s; a window that crosses midnight writes its end with +1 (%s+1)", e, s, e)
		case !nextDay && e == s:
			probs.add("end", "equals the start: the window is empty")
		case nextDay && e > s:
			probs.add("end", "%s+1 makes the window longer than a day; at most 24 hours", e)
		case w.Length() < minWindow:
			probs.add("end", "the window must be at least 5 minutes long")
		}
	}
	switch {
	case maxWakes < 1 || maxWakes > MaxWakesLimit:
		probs.add("max_wakes", "must be from 1 to %d, not %d", MaxWakesLimit, maxWakes)
	case err == nil && err2 == nil && w.Length() > 0 && maxWakes > MaxFit(w.Length()):
		probs.add("max_wakes", "a window of %s fits at most %d wake-ups 5 minutes apart, not %d",
			w.Length(), MaxFit(w.Length()), maxWakes)
	}
	return w, probs
}

// ErrLimit is returned when the agent already holds its schedules' maximum.
var ErrLimit = errors.New("schedule limit reached")

// LimitError names the limit and how to raise it.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("the agent already has %d schedules, the most it may hold (GUILDS_MAX_SCHEDULES_PER_AGENT); delete one first", e.Max)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// ErrNotFound is store.ErrNotFound: no such schedule of that agent.
var ErrNotFound = store.ErrNotFound
