package schedules

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

func paris(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Across the Paris changes of 2026 (29 March: 02:00 → 03:00; 25 October:
// 03:00 → 02:00) a window keeps its wall-clock bounds and its real length
// changes by the hour.
func TestWindowSpanAcrossDST(t *testing.T) {
	loc := paris(t)
	w := Window{Location: loc, Start: 60, End: 4 * 60, MaxWakes: 3} // 01:00–04:00
	s, e := w.Span(2026, time.March, 29)
	if got := e.Sub(s); got != 2*time.Hour {
		t.Fatalf("spring: %v–%v is %v", s, e, got)
	}
	s, e = w.Span(2026, time.October, 25)
	if got := e.Sub(s); got != 4*time.Hour {
		t.Fatalf("autumn: %v–%v is %v", s, e, got)
	}
	// 02:30 does not exist on 29 March: it is the end of the gap, 03:00 CEST.
	if got := At(loc, 2026, time.March, 29, 150); !got.Equal(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("02:30 in the gap: %v", got.UTC())
	}
	// 02:30 occurs twice on 25 October: the first one, 00:30 UTC.
	if got := At(loc, 2026, time.October, 25, 150); !got.Equal(time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)) {
		t.Fatalf("02:30 twice: %v", got.UTC())
	}
	// A window crossing midnight ends on the next local day; that night
	// 02:00 does not exist, so it ends when the gap does (03:00 CEST).
	night := Window{Location: loc, Start: 22 * 60, End: 2 * 60, NextDay: true, MaxWakes: 2}
	s, e = night.Span(2026, time.March, 28)
	if !s.Equal(time.Date(2026, 3, 28, 21, 0, 0, 0, time.UTC)) || !e.Equal(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("night: %v–%v", s.UTC(), e.UTC())
	}
}

func TestCheckRefusals(t *testing.T) {
	base := New{AgentID: "a", Kind: KindWindow, Timezone: "Europe/Paris", Start: "09:00", End: "17:00", MaxWakes: 3,
		Description: "check the inbox", Instruction: "Look at the inbox."}
	if _, err := Check(base); err != nil {
		t.Fatalf("valid window: %v", err)
	}
	cross := base
	cross.Start, cross.End = "22:00", "02:00+1"
	if c, err := Check(cross); err != nil || !c.Window.NextDay {
		t.Fatalf("crossing window: %v", err)
	}
	for name, tc := range map[string]struct {
		mod   func(*New)
		field string
		text  string
	}{
		"six fields":      {func(n *New) { n.Kind, n.Cron = KindCron, "0 0 9 * * *" }, "cron", "must have 5 fields"},
		"too close":       {func(n *New) { n.Kind, n.Cron = KindCron, "0,59 * * * *" }, "cron", "00:59 and then at"},
		"unknown zone":    {func(n *New) { n.Timezone = "Mars/Olympus" }, "timezone", "not an IANA"},
		"no zone":         {func(n *New) { n.Timezone = "" }, "timezone", "required"},
		"start after end": {func(n *New) { n.Start, n.End = "17:00", "09:00" }, "end", "before the start 17:00"},
		"empty window":    {func(n *New) { n.End = "09:00" }, "end", "empty"},
		"over a day":      {func(n *New) { n.End = "10:00+1" }, "end", "longer than a day"},
		"bad clock":       {func(n *New) { n.Start = "9am" }, "start", "HH:MM"},
		"max_wakes 0":     {func(n *New) { n.MaxWakes = 0 }, "max_wakes", "from 1 to 48"},
		"max_wakes 49":    {func(n *New) { n.MaxWakes = 49 }, "max_wakes", "from 1 to 48"},
		"does not fit":    {func(n *New) { n.End, n.MaxWakes = "09:10", 4 }, "max_wakes", "fits at most 2"},
		"description":     {func(n *New) { n.Description = strings.Repeat("d", 401) }, "description", "401 characters"},
		"two lines":       {func(n *New) { n.Description = "a\nb" }, "description", "one line"},
		"no description":  {func(n *New) { n.Description = "  " }, "description", "required"},
		"instruction":     {func(n *New) { n.Instruction = strings.Repeat("é", 2001) }, "instruction", "2001 characters"},
		"kind":            {func(n *New) { n.Kind = "hourly" }, "kind", "cron or window"},
	} {
		in := base
		tc.mod(&in)
		_, err := Check(in)
		if err == nil || !strings.Contains(err.Error(), tc.field+": ") || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: got %v, want %s: …%s…", name, err, tc.field, tc.text)
		}
	}
	exact := base
	exact.Description, exact.Instruction = strings.Repeat("é", 400), strings.Repeat("é", 2000)
	if _, err := Check(exact); err != nil {
		t.Fatalf("at the limits: %v", err)
	}
}

// Property: Wakes never draws more than asked or than fits, keeps every
// wake-up inside the span, in order and at least MinGap apart.
func TestWakesProperty(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	start := time.Date(2026, 3, 28, 21, 0, 0, 0, time.UTC)
	for i := 0; i < 2000; i++ {
		span := time.Duration(r.Intn(6*60)+1) * time.Minute
		k := 1 + r.Intn(MaxWakesLimit)
		got := Wakes(start, start.Add(span), k, r)
		if len(got) > k || len(got) > MaxFit(span) || (k <= MaxFit(span) && len(got) != k) {
			t.Fatalf("span %v, k %d: %d wake-ups", span, k, len(got))
		}
		for j, w := range got {
			if w.Before(start) || !w.Before(start.Add(span)) {
				t.Fatalf("span %v: %v outside", span, w)
			}
			if j > 0 && w.Sub(got[j-1]) < MinGap {
				t.Fatalf("span %v: %v then %v", span, got[j-1], w)
			}
		}
	}
}
