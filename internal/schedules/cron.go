package schedules

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed 5-field UTC expression: minute hour day-of-month month
// day-of-week. Each field is a set of allowed values as a bit mask.
//
// The day fields are ANDed, as Temporal Schedules interpret a cron string
// (the "or" special case of some cron implementations is not implemented
// there), so the times computed here are the times Temporal fires.
type Cron struct {
	expr                     string
	minute, hour, dom, month uint64
	dow                      uint64 // 0 = Sunday … 6 = Saturday (7 is folded onto 0)
}

// MinGap is the least time between two consecutive wake-ups of a schedule.
const MinGap = 5 * time.Minute

type cronField struct {
	name     string
	min, max int
	names    map[string]int
}

var (
	monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
	dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

	cronFields = [5]cronField{
		{name: "minute", min: 0, max: 59},
		{name: "hour", min: 0, max: 23},
		{name: "day of month", min: 1, max: 31},
		{name: "month", min: 1, max: 12, names: monthNames},
		{name: "day of week", min: 0, max: 7, names: dayNames},
	}
)

// ParseCron parses a 5-field expression. Fields accept *, a value, a range
// a-b, a list of those separated by commas, and a step /n after * or a range
// (a/n means a to the field's maximum). Months and weekdays accept their
// three-letter English names; 0 and 7 are both Sunday. Shorthands (@daily),
// seconds, years, ? L W and # are refused: they are not 5-field UTC cron.
func ParseCron(expr string) (Cron, error) {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return Cron{}, fmt.Errorf("must have 5 fields (minute hour day-of-month month day-of-week) in UTC, not %d", len(fields))
	}
	var masks [5]uint64
	for i, f := range fields {
		m, err := parseField(f, cronFields[i])
		if err != nil {
			return Cron{}, fmt.Errorf("%s field %q: %w", cronFields[i].name, f, err)
		}
		masks[i] = m
	}
	if masks[4]&(1<<7) != 0 {
		masks[4] = masks[4]&^(1<<7) | 1
	}
	c := Cron{expr: strings.Join(fields, " "), minute: masks[0], hour: masks[1], dom: masks[2], month: masks[3], dow: masks[4]}
	if !c.anyDay() {
		return Cron{}, fmt.Errorf("never fires: no month has the days it names")
	}
	return c, nil
}

// String is the expression with its fields separated by single spaces.
func (c Cron) String() string { return c.expr }

func parseField(s string, f cronField) (uint64, error) {
	var mask uint64
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			return 0, fmt.Errorf("has an empty list item")
		}
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > f.max+1 {
				return 0, fmt.Errorf("step %q must be a number from 1 to %d", stepText, f.max+1)
			}
			step = n
		}
		lo, hi := f.min, f.max
		switch {
		case rng == "*":
			if f.max == 7 {
				hi = 6 // * over weekdays is 0-6, not 0-7
			}
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = fieldValue(a, f); err != nil {
				return 0, err
			}
			if hi, err = fieldValue(b, f); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("range %s starts after it ends", rng)
			}
		default:
			v, err := fieldValue(rng, f)
			if err != nil {
				return 0, err
			}
			lo = v
			if !hasStep {
				hi = v
			}
		}
		for v := lo; v <= hi; v += step {
			mask |= 1 << uint(v)
		}
	}
	return mask, nil
}

func fieldValue(s string, f cronField) (int, error) {
	if v, ok := f.names[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		if f.names != nil {
			return 0, fmt.Errorf("%q is not a number from %d to %d or a three-letter name", s, f.min, f.max)
		}
		return 0, fmt.Errorf("%q is not a number from %d to %d", s, f.min, f.max)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("%d is outside %d-%d", v, f.min, f.max)
	}
	return v, nil
}

// daysIn is the number of days of a month in a leap year.
var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// anyDay reports whether some month the expression allows has a day of month
// it allows (the weekday always falls somewhere within 28 years).
func (c Cron) anyDay() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<uint(m)) == 0 {
			continue
		}
		if c.dom&((1<<uint(daysIn[m]+1))-2) != 0 {
			return true
		}
	}
	return false
}

func (c Cron) dayMatches(t time.Time) bool {
	return c.month&(1<<uint(t.Month())) != 0 && c.dom&(1<<uint(t.Day())) != 0 && c.dow&(1<<uint(t.Weekday())) != 0
}

// Matches reports whether the expression fires at t's minute (UTC).
func (c Cron) Matches(t time.Time) bool {
	t = t.UTC()
	return c.dayMatches(t) && c.hour&(1<<uint(t.Hour())) != 0 && c.minute&(1<<uint(t.Minute())) != 0
}

// maxSearchDays bounds Next: day-of-week and day-of-month line up again
// within 28 years, and 29 February within 8.
const maxSearchDays = 366 * 29

// Next returns the first firing strictly after t, and false when there is
// none within 29 years (an impossible combination such as 30 February).
func (c Cron) Next(t time.Time) (time.Time, bool) {
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; i < maxSearchDays; i++ {
		if c.dayMatches(day) {
			from := 0
			if i == 0 {
				from = t.Hour()*60 + t.Minute()
			}
			if m, ok := c.firstMinuteFrom(from); ok {
				return day.Add(time.Duration(m) * time.Minute), true
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, false
}

// firstMinuteFrom returns the first minute of the day (0-1439) at or after
// from at which the hour and minute fields match.
func (c Cron) firstMinuteFrom(from int) (int, bool) {
	for h := from / 60; h < 24; h++ {
		if c.hour&(1<<uint(h)) == 0 {
			continue
		}
		mins := c.minute
		if h == from/60 {
			mins &^= (1 << uint(from%60)) - 1
		}
		if mins != 0 {
			return h*60 + bits.TrailingZeros64(mins), true
		}
	}
	return 0, false
}

// Gap is two consecutive firings too close together.
type Gap struct{ First, Second time.Time }

// cycleStart and cycleEnd bound the span over which the least gap between
// consecutive firings is found: 29 years from a year following a leap year
// cover every alignment of weekday, day of month and leap day, plus every
// month boundary and year wrap. Only days that fire are visited, and within
// a day only the hour and minute sets matter, so this stays cheap.
var (
	cycleStart = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	cycleEnd   = cycleStart.AddDate(29, 0, 0)
)

// MinimumGap returns the two consecutive firings that are closest together
// over the expression's whole cycle, and false when it fires at most once.
func (c Cron) MinimumGap() (Gap, bool) {
	// Within a day the firings are the same minute-of-day set on every day
	// that fires; the least gap is either inside such a day or between the
	// last firing of a day and the first of the next day that fires.
	var dayMins []int
	for h := 0; h < 24; h++ {
		if c.hour&(1<<uint(h)) == 0 {
			continue
		}
		for m := 0; m < 60; m++ {
			if c.minute&(1<<uint(m)) != 0 {
				dayMins = append(dayMins, h*60+m)
			}
		}
	}
	if len(dayMins) == 0 {
		return Gap{}, false
	}
	inDay := -1 // index i of the least gap dayMins[i+1]-dayMins[i]
	for i := 0; i+1 < len(dayMins); i++ {
		if inDay < 0 || dayMins[i+1]-dayMins[i] < dayMins[inDay+1]-dayMins[inDay] {
			inDay = i
		}
	}
	first, last := dayMins[0], dayMins[len(dayMins)-1]
	var best Gap
	found := false
	consider := func(a, b time.Time) {
		if !found || b.Sub(a) < best.Second.Sub(best.First) {
			best, found = Gap{a, b}, true
		}
	}
	var prevDay time.Time
	havePrev := false
	for day := cycleStart; day.Before(cycleEnd); day = day.AddDate(0, 0, 1) {
		if !c.dayMatches(day) {
			continue
		}
		if inDay >= 0 && !found {
			consider(day.Add(time.Duration(dayMins[inDay])*time.Minute), day.Add(time.Duration(dayMins[inDay+1])*time.Minute))
		}
		if havePrev {
			consider(prevDay.Add(time.Duration(last)*time.Minute), day.Add(time.Duration(first)*time.Minute))
		}
		prevDay, havePrev = day, true
		if found && best.Second.Sub(best.First) <= time.Minute {
			break // nothing is closer than a minute
		}
	}
	return best, found
}

// CheckGap refuses an expression two of whose consecutive firings are less
// than MinGap apart, naming the first such pair.
func (c Cron) CheckGap() error {
	g, ok := c.MinimumGap()
	if !ok || g.Second.Sub(g.First) >= MinGap {
		return nil
	}
	// The year is left out: the pair recurs, and the cycle walked starts in 2001.
	return fmt.Errorf("fires at %s and then at %s UTC, %s apart; consecutive wake-ups must be at least 5 minutes apart",
		g.First.Format("Mon 2 Jan 15:04"), g.Second.Format("Mon 2 Jan 15:04"), g.Second.Sub(g.First))
}
