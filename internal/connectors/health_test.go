package connectors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
)

// TestHealthErrorMessages: the typed errors read as a clear tool result line
// that says why and what to do, for each reason.
func TestHealthErrorMessages(t *testing.T) {
	id := uuid.MustParse("6f1c1d2e-0000-4000-8000-000000000001")
	for code, want := range map[string]string{
		"disconnected":   "its login was disconnected",
		"expired":        "its login expired and cannot be renewed",
		"token_rejected": "the server no longer accepts its login",
		"invalid_grant":  "the provider refused its login (invalid_grant)",
	} {
		msg := (&connectors.ErrReconnectRequired{ConnectionID: id, Server: "notion", Code: code}).Error()
		if !strings.Contains(msg, "notion") || !strings.Contains(msg, want) || !strings.Contains(msg, "guilds connections connect "+id.String()) {
			t.Errorf("%s: %q", code, msg)
		}
	}
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	one := (&connectors.ErrRefreshFailing{ConnectionID: id, Server: "gmail", Code: "http_503", Attempts: 1, NextRetryAt: next}).Error()
	if !strings.Contains(one, "(http_503) after 1 attempt;") || !strings.Contains(one, "2030-01-02T03:04:05Z") || !strings.Contains(one, "try again later") {
		t.Errorf("refresh failing: %q", one)
	}
	if three := (&connectors.ErrRefreshFailing{Server: "gmail", Code: "timeout", Attempts: 3}).Error(); !strings.Contains(three, "after 3 attempts") {
		t.Errorf("refresh failing: %q", three)
	}
}
