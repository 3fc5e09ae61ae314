package schedules

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // every IANA zone, whatever the host has installed
)

// Clock is a wall-clock time of day in minutes after midnight.
type Clock int

func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// Window is a daily wake-up window in an IANA time zone. A window that
// crosses midnight writes its end with a "+1" suffix ("22:00" to "02:00+1"),
// so an end before its start without the suffix is a mistake, refused, and
// never silently read as the next morning.
type Window struct {
	Location *time.Location
	Start    Clock
	End      Clock
	NextDay  bool // the end is on the day after the start
	MaxWakes int
}

// Limits of a window.
const (
	MaxWakesLimit = 48
	minWindow     = MinGap
)

// ParseClock reads "HH:MM" (24-hour).
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("%q must be a time of day written HH:MM (24-hour)", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("%q must be a time of day written HH:MM (24-hour), from 00:00 to 23:59", s)
	}
	return Clock(hh*60 + mm), nil
}

// Length is the nominal length of the window (a DST change makes the real
// span of one day an hour shorter or longer).
func (w Window) Length() time.Duration {
	d := int(w.End) - int(w.Start)
	if w.NextDay {
		d += 24 * 60
	}
	return time.Duration(d) * time.Minute
}

// MaxFit is how many wake-ups MinGap apart fit into a window of length d.
func MaxFit(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d-time.Nanosecond)/MinGap) + 1
}

// At returns the instant of a wall-clock time on a local date. A time the
// clocks skip (spring forward) is the instant the gap ends; a time that
// occurs twice (fall back) is its first occurrence.
func At(loc *time.Location, y int, m time.Month, d int, c Clock) time.Time {
	t := time.Date(y, m, d, int(c)/60, int(c)%60, 0, 0, loc)
	if t.Hour()*60+t.Minute() != int(c) || t.Day() != d {
		// In a gap: Go chose an offset; the gap ends at the zone transition
		// between the instants one offset and the other give.
		lo := time.Date(y, m, d, int(c)/60, int(c)%60, 0, 0, time.UTC).Add(-14 * time.Hour)
		hi := lo.Add(28 * time.Hour)
		return transitionAfter(loc, lo, hi, c, d)
	}
	// The earlier occurrence of an ambiguous time is an hour (or the DST
	// offset) before; take it when it reads the same wall clock.
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := t.Add(-back)
		if e.Hour() == t.Hour() && e.Minute() == t.Minute() && e.Day() == t.Day() {
			return e
		}
	}
	return t
}

// transitionAfter finds the first instant in [lo, hi) whose local wall
// clock on day d is at or after c (the end of a DST gap), by bisection on
// the zone's transitions.
func transitionAfter(loc *time.Location, lo, hi time.Time, c Clock, d int) time.Time {
	after := func(t time.Time) bool {
		lt := t.In(loc)
		if lt.Day() != d {
			return lt.After(time.Date(lt.Year(), lt.Month(), d, 0, 0, 0, 0, loc)) // later day
		}
		return lt.Hour()*60+lt.Minute() >= int(c)
	}
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if after(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi.Truncate(time.Second)
}

// Span returns the window's instants for the local date of day (its year,
// month and day in the window's zone): [start, end).
func (w Window) Span(y int, m time.Month, d int) (time.Time, time.Time) {
	start := At(w.Location, y, m, d, w.Start)
	ed := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	if w.NextDay {
		ed = ed.AddDate(0, 0, 1)
	}
	end := At(w.Location, ed.Year(), ed.Month(), ed.Day(), w.End)
	return start, end
}

// EndText is the end as written: "HH:MM", with "+1" when it is the next day.
func (w Window) EndText() string {
	if w.NextDay {
		return w.End.String() + "+1"
	}
	return w.End.String()
}

// Wakes draws up to k wake-up times in [start, end), each at least MinGap
// after the one before, uniformly over every such arrangement: k points are
// drawn in the span less the (k-1) gaps, sorted, and the i-th is pushed back
// by i gaps. k is lowered to what fits. Times are whole seconds.
func Wakes(start, end time.Time, k int, r *rand.Rand) []time.Time {
	span := end.Sub(start)
	if k > MaxFit(span) {
		k = MaxFit(span)
	}
	if k <= 0 {
		return nil
	}
	free := int64((span - time.Duration(k-1)*MinGap) / time.Second)
	if free < 1 {
		free = 1
	}
	offs := make([]int64, k)
	for i := range offs {
		offs[i] = r.Int63n(free) //nolint:gosec // wake-up times, not a secret
	}
	slices.Sort(offs)
	out := make([]time.Time, k)
	for i, o := range offs {
		out[i] = start.Add(time.Duration(o)*time.Second + time.Duration(i)*MinGap)
	}
	return out
}
