package browserops

import (
	"strings"
	"testing"
	"time"
)

// A dialog at load and one a timer opens between two calls are both
// accepted and reported; neither holds the page.
func TestDialogsAtLoadAndBetweenCallsAreAcceptedAndReported(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	got := ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/alerts.html"}))
	if !strings.Contains(got, `(HTTP 200) "Alerts"`) || !strings.Contains(got, `(the page showed a dialog: alert "Welcome!", accepted)`) {
		t.Errorf("navigate to a page that alerts at load: %s", got)
	}
	// The timer's alert opens a second after load: between calls, or
	// during one; either way it is reported once and holds nothing up.
	all := got
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(all, `alert "Later"`) && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		got = ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return document.title"}))
		if !strings.HasPrefix(got, `"Alerts"`) {
			t.Fatalf("eval: %s", got)
		}
		all += got
	}
	if strings.Count(all, `alert "Later"`) != 1 {
		t.Errorf("the timer's alert is not reported once:\n%s", all)
	}
}
