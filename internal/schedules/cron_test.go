package schedules

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestCronGapRule(t *testing.T) {
	for _, tc := range []struct {
		expr string
		bad  string // substring of the refusal, "" when accepted
	}{
		{"*/5 * * * *", ""},
		{"0 9 * * 1-5", ""},
		{"0,30 * * * *", ""},
		{"55 23 * * *", ""},
		{"0 0 29 2 *", ""},
		{"*/4 * * * *", "fires at Mon 1 Jan 00:00 and then at Mon 1 Jan 00:04 UTC, 4m0s apart"},
		{"0,3 * * * *", "00:00 and then at Mon 1 Jan 00:03"},
		{"0,59 * * * *", "00:59 and then at Mon 1 Jan 01:00 UTC, 1m0s apart"},
		{"* * * * *", "1m0s apart"},
		// The last firing of one day and the first of the next.
		{"58 23 * * *,0 0 * * *", "5 fields"},
		{"0,58 0,23 * * *", "23:58 and then at Tue 2 Jan 00:00"},
		// Sunday 23:58 and Monday 00:01 are three minutes apart across the week's wrap.
		{"58 23 * * 0", ""},
		{"1,58 0,23 * * 0,1", "23:58 and then at"},
	} {
		c, err := ParseCron(tc.expr)
		if err == nil {
			err = c.CheckGap()
		}
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q refused: %v", tc.expr, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: got %v, want an error containing %q", tc.expr, err, tc.bad)
		}
	}
}

func TestParseCronRefusals(t *testing.T) {
	for expr, want := range map[string]string{
		"0 0 * * * *":   "must have 5 fields",
		"@daily":        "must have 5 fields",
		"60 * * * *":    "minute field",
		"0 24 * * *":    "hour field",
		"0 0 0 * *":     "day of month field",
		"0 0 * 13 *":    "month field",
		"0 0 * * 8":     "day of week field",
		"0 0 30 2 *":    "never fires",
		"5-1 * * * *":   "starts after it ends",
		"*/0 * * * *":   "step",
		"0 0 L * *":     "day of month field",
		"0 0 ? * *":     "day of month field",
		"1,,2 * * * *":  "empty list item",
		"0 0 * * MON#1": "day of week field",
	} {
		if _, err := ParseCron(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", expr, err, want)
		}
	}
	c, err := ParseCron("0 9 * jan-mar MON-fri")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Matches(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) || c.Matches(time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)) {
		t.Fatal("names not read")
	}
	sun7, _ := ParseCron("0 0 * * 7")
	if !sun7.Matches(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)) { // a Sunday
		t.Fatal("7 is Sunday")
	}
}

// Day of month and day of week are ANDed, as Temporal reads a cron string.
func TestCronDayFieldsAnd(t *testing.T) {
	c, _ := ParseCron("0 12 13 * 5") // Friday the 13th only
	next, ok := c.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if !ok || !next.Equal(time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("next Friday 13th: %v", next)
	}
	leap, _ := ParseCron("30 6 29 2 *")
	next, ok = leap.Next(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if !ok || !next.Equal(time.Date(2028, 2, 29, 6, 30, 0, 0, time.UTC)) {
		t.Fatalf("next 29 February: %v", next)
	}
}

// randomField builds a random cron field over [lo, hi].
func randomField(r *rand.Rand, lo, hi int) string {
	switch r.Intn(5) {
	case 0:
		return "*"
	case 1:
		return fmt.Sprintf("*/%d", 1+r.Intn(hi-lo+1))
	case 2:
		a := lo + r.Intn(hi-lo+1)
		b := a + r.Intn(hi-a+1)
		return fmt.Sprintf("%d-%d", a, b)
	case 3:
		a := lo + r.Intn(hi-lo+1)
		b := a + r.Intn(hi-a+1)
		return fmt.Sprintf("%d-%d/%d", a, b, 1+r.Intn(hi-lo+1))
	default:
		n := 1 + r.Intn(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprint(lo + r.Intn(hi-lo+1))
		}
		return strings.Join(parts, ",")
	}
}

// bruteGap expands the expression minute by minute over [from, to) and
// returns the least gap between consecutive firings.
func bruteGap(c Cron, from, to time.Time) (Gap, bool) {
	var prev time.Time
	var best Gap
	found := false
	for t := from; t.Before(to); t = t.Add(time.Minute) {
		if !c.Matches(t) {
			continue
		}
		if !prev.IsZero() && (!found || t.Sub(prev) < best.Second.Sub(best.First)) {
			best, found = Gap{prev, t}, true
		}
		prev = t
	}
	return best, found
}

// Property: for an expression that repeats every week (day of month and
// month are *), the least gap over the whole cycle is the least gap of a
// minute-by-minute expansion over two weeks and a day (so the wrap from one week
// to the next is seen); for any expression, the cycle's least gap is never
// larger than what a week shows, and Next agrees with the expansion.
func TestCronMinimumGapProperty(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	from := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	to := from.AddDate(0, 0, 15)                        // two weeks and a day: a weekly firing and its wrap
	checked := 0
	for i := 0; i < 300; i++ {
		weekly := i%2 == 0
		dom, month := "*", "*"
		if !weekly {
			dom, month = randomField(r, 1, 28), randomField(r, 1, 12)
		}
		expr := strings.Join([]string{randomField(r, 0, 59), randomField(r, 0, 23), dom, month, randomField(r, 0, 6)}, " ")
		c, err := ParseCron(expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		got, ok := c.MinimumGap()
		want, wok := bruteGap(c, from, to)
		if weekly {
			if ok != wok || (ok && got.Second.Sub(got.First) != want.Second.Sub(want.First)) {
				t.Fatalf("%q: cycle gap %v (%v), week gap %v (%v)", expr, got, ok, want, wok)
			}
		} else if wok && (!ok || got.Second.Sub(got.First) > want.Second.Sub(want.First)) {
			t.Fatalf("%q: cycle gap %v larger than a week's %v", expr, got, want)
		}
		if ok {
			if !c.Matches(got.First) || !c.Matches(got.Second) {
				t.Fatalf("%q: gap times %v do not fire", expr, got)
			}
			if n, _ := c.Next(got.First); !n.Equal(got.Second) {
				t.Fatalf("%q: gap %v is not consecutive (next after first is %v)", expr, got, n)
			}
			checked++
		}
		// Next matches the first firing of the expansion.
		for t0 := from; t0.Before(from.Add(36 * time.Hour)); t0 = t0.Add(time.Minute) {
			if c.Matches(t0.Add(time.Minute)) {
				if n, ok := c.Next(t0); !ok || !n.Equal(t0.Add(time.Minute)) {
					t.Fatalf("%q: Next(%v) = %v", expr, t0, n)
				}
				break
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d expressions fired twice", checked)
	}
}
