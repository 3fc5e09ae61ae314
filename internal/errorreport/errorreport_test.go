package errorreport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/errorreport/errorreporttest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/tools"
)

func TestErrorEventsCarryIdsAndNoCredential(t *testing.T) {
	srv := errorreporttest.New(t)
	const boxKey = "tvly-instance-key-0123456789"
	r, err := New(srv.DSN(), []string{boxKey}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	const loginToken = "login-access-token-abcdef123456"
	const unknown = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	cause := errors.New("tools/call failed: upstream said Authorization: Bearer " + loginToken +
		" (box key " + boxKey + ", retry with token=" + unknown + ") dialing postgres://guilds:hunter2pass@db:5432/guilds")
	r.Error(context.Background(), cause, Tags{Component: "activity", Org: "org-1", Guild: "guild-1", Agent: "agent-1", Run: "run-1",
		Redactor: tools.NewRedactor([]string{loginToken}, nil)})
	r.Panic(context.Background(), "handler panicked with "+boxKey, Tags{Component: "api"})
	r.Flush(10 * time.Second)

	got := srv.Received()
	if strings.Count(got, `"event_id"`) < 2 {
		t.Fatalf("expected two events, got:\n%s", got)
	}
	for _, s := range []string{loginToken, boxKey, unknown, "hunter2pass"} {
		if strings.Contains(got, s) {
			t.Errorf("an event carries %q:\n%s", s, got)
		}
	}
	for _, want := range []string{`"run_id":"run-1"`, `"organisation_id":"org-1"`, `"guild_id":"guild-1"`, `"agent_id":"agent-1"`,
		"tools/call failed", tools.RedactionMarker} {
		if !strings.Contains(got, want) {
			t.Errorf("the events lack %s:\n%s", want, got)
		}
	}
	for _, absent := range []string{`"request"`, `"breadcrumbs"`, `"modules"`} {
		if strings.Contains(got, absent) {
			t.Errorf("an event carries %s:\n%s", absent, got)
		}
	}
}

func TestOffWithoutDSN(t *testing.T) {
	r, err := New("", nil, "", nil)
	if err != nil || r != nil {
		t.Fatalf("New(\"\") = %v, %v", r, err)
	}
	// A nil reporter takes every call.
	r.Error(context.Background(), errors.New("x"), Tags{})
	r.Panic(context.Background(), "x", Tags{})
	r.Flush(time.Millisecond)
}

func TestABadDSNIsNotEchoed(t *testing.T) {
	const dsn = "not a dsn with secret-part-123"
	_, err := New(dsn, nil, "", nil)
	if err == nil || strings.Contains(err.Error(), "secret-part-123") {
		t.Fatalf("err = %v", err)
	}
}

func TestScrubPatterns(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer abcdefghijkl":                        "Bearer [REDACTED]",
		`{"access_token":"at-123456789"}`:            `{"access_token":"[REDACTED]"}`,
		"https://u:p4ssw0rd@host/x":                  "https://u:[REDACTED]@host/x",
		"token gld_abcdefghijklmnop used":            "token [REDACTED] used",
		"nothing here":                               "nothing here",
		"client_secret=abc123456&grant_type=refresh": "client_secret=[REDACTED]&grant_type=refresh",
	} {
		if got := scrubPatterns(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

// The DSN is the error-reporting integration's: the reporter is on exactly
// when the integrations registry says so, and reports reach its DSN.
func TestDSNComesFromTheIntegrationsRegistry(t *testing.T) {
	srv := errorreporttest.New(t)
	off, err := FromIntegrations(integrations.New(func(string) string { return "" }), nil, "test", nil)
	if err != nil || off != nil {
		t.Fatalf("without SENTRY_DSN: %v, %v", off, err)
	}
	reg := integrations.New(func(name string) string {
		if name == DSNVariable {
			return srv.DSN()
		}
		return ""
	})
	r, err := FromIntegrations(reg, nil, "test", nil)
	if err != nil || r == nil {
		t.Fatalf("with SENTRY_DSN: %v, %v", r, err)
	}
	r.Error(context.Background(), errors.New("reported through the registry's DSN"), Tags{Component: "api"})
	r.Flush(10 * time.Second)
	if !strings.Contains(srv.Received(), "reported through the registry's DSN") {
		t.Fatalf("the event did not reach the DSN: %s", srv.Received())
	}
}
