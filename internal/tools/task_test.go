package tools_test

import (
	"testing"
	"time"

	"github.com/guilds/guilds/internal/tools"
)

func TestTaskPollInterval(t *testing.T) {
	for _, c := range []struct {
		asked, waited, want time.Duration
	}{
		{0, 0, tools.TaskPollDefault},
		{10 * time.Millisecond, 0, time.Second},          // the floor
		{5 * time.Second, 0, 5 * time.Second},            // the server's own
		{time.Hour, 0, time.Minute},                      // the ceiling
		{time.Second, 2 * time.Hour, 2 * time.Minute},    // grown with the wait
		{time.Hour, 2 * time.Hour, 2 * time.Minute},      // the ceiling grows too
		{time.Second, 48 * time.Hour, tools.TaskPollMax}, // capped
		{30 * time.Second, 10 * time.Minute, 30 * time.Second},
	} {
		if got := tools.TaskPollInterval(c.asked, c.waited); got != c.want {
			t.Errorf("TaskPollInterval(%s, %s) = %s, want %s", c.asked, c.waited, got, c.want)
		}
	}
}

// Polls over a day-long task stay few: each costs the run's history about
// ten events.
func TestTaskPollsOverADay(t *testing.T) {
	polls := 0
	for waited := time.Duration(0); waited < 24*time.Hour; polls++ {
		waited += tools.TaskPollInterval(time.Second, waited)
	}
	if polls > 600 {
		t.Errorf("%d polls in a day", polls)
	}
	t.Logf("%d polls over a day at the server's 1 s", polls)
}
