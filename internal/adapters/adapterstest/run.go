package adapterstest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
)

// Spec is what the conformance run of one adapter needs: its manifest slug,
// the fake service, the keys to try and what its tools must answer.
type Spec struct {
	Slug string
	URL  string // the fake service, in place of the manifest's URL
	// Host sets the adapter host's options (its timeout, say).
	Host host.Options

	// BadKeys are each refused by Connect with ErrKeyRejected, and none is
	// stored.
	BadKeys []string
	GoodKey string
	// BadValues and GoodValues replace BadKeys and GoodKey for a row whose
	// key connect takes several fields (catalog key_fields); every good
	// value is one of the Secrets.
	BadValues  []map[string]string
	GoodValues map[string]string
	// Tools is how many tools Connect lists (the manifest's count);
	// Listed names some of them, the first one first.
	Tools  int
	Listed []string
	// Hint is the account hint the good key's check stores ("" for none).
	Hint string
	// Secrets must never appear in a call's answer or error, nor in the
	// hint; GoodKey is always one of them.
	Secrets []string
	// Connected runs adapter-specific checks right after the good connect.
	Connected func(t *testing.T)
	Calls     []Call
}

// Call is one tool call through the pool after the good connect.
type Call struct {
	Tool string
	Args string // JSON; "" means {}
	// Want are substrings of the answer; with WantErr set, of the error.
	Want    []string
	WantErr bool
	// Prefix starts the answer; Lines, when set, is its count of lines.
	Prefix string
	Lines  int
	// Check runs adapter-specific checks of the answer (or error).
	Check func(t *testing.T, out string, err error)
}

// Run connects the adapter's login through the session pool on a fresh
// database, as production does, and checks what every adapter promises: a
// refused key stores nothing, the good key stores the manifest's tools and
// the hint, calls answer, and no key leaks. It returns the connected
// environment for further checks.
func Run(t *testing.T, s Spec) *Env {
	t.Helper()
	ctx := context.Background()
	e := NewWithHost(t, s.Slug, s.URL, s.Host)
	secrets := append([]string{s.GoodKey}, s.Secrets...)
	for _, v := range s.GoodValues {
		secrets = append(secrets, v)
	}

	for _, bad := range s.BadKeys {
		if _, err := e.Connect(ctx, bad); !errors.Is(err, connections.ErrKeyRejected) {
			t.Fatalf("%s: bad key %q: %v, want ErrKeyRejected", s.Slug, bad, err)
		}
	}
	for i, bad := range s.BadValues {
		if _, err := e.ConnectValues(ctx, bad); !errors.Is(err, connections.ErrKeyRejected) {
			t.Fatalf("%s: bad values #%d: %v, want ErrKeyRejected", s.Slug, i, err)
		}
	}
	if e.Stored(t) {
		t.Fatalf("%s: a rejected key was stored", s.Slug)
	}

	connect := func() ([]string, error) { return e.Connect(ctx, s.GoodKey) }
	if s.GoodValues != nil {
		connect = func() ([]string, error) { return e.ConnectValues(ctx, s.GoodValues) }
	}
	listed, err := connect()
	if err != nil || len(listed) != s.Tools || e.Tools != s.Tools {
		t.Fatalf("%s: connect: %v, %d tools listed, %d in the manifest, want %d", s.Slug, err, len(listed), e.Tools, s.Tools)
	}
	names := map[string]bool{}
	for _, name := range listed {
		names[name] = true
	}
	for i, want := range s.Listed {
		if !names[want] || (i == 0 && listed[0] != want) {
			t.Fatalf("%s: %s not listed, or not first: %v", s.Slug, want, listed)
		}
	}
	hint := e.Hint(t)
	if want := strings.TrimSpace("connected " + s.Hint); hint != want {
		t.Fatalf("%s: status and hint %q, want %q", s.Slug, hint, want)
	}
	noSecret(t, s.Slug+" hint", hint, nil, secrets)
	if s.Connected != nil {
		s.Connected(t)
	}

	for _, c := range s.Calls {
		args := c.Args
		if args == "" {
			args = "{}"
		}
		out, err := e.Host.Call(ctx, e.ConnectionID, c.Tool, json.RawMessage(args))
		where := s.Slug + " " + c.Tool + " " + args
		text := out
		if c.WantErr {
			if err == nil {
				t.Fatalf("%s: answered %q, want an error", where, out)
			}
			text = err.Error()
		} else if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		for _, want := range c.Want {
			if !strings.Contains(text, want) {
				t.Fatalf("%s: %q lacks %q", where, text, want)
			}
		}
		if !strings.HasPrefix(out, c.Prefix) {
			t.Fatalf("%s: %q does not start with %q", where, out, c.Prefix)
		}
		if n := len(Lines(out)); c.Lines != 0 && n != c.Lines {
			t.Fatalf("%s: %d lines, want %d: %q", where, n, c.Lines, out)
		}
		noSecret(t, where, out, err, secrets)
		if c.Check != nil {
			c.Check(t, out, err)
		}
	}
	return e
}

// Lines splits an answer into its lines.
func Lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func noSecret(t *testing.T, where, out string, err error, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if strings.Contains(out, s) || (err != nil && strings.Contains(err.Error(), s)) {
			t.Fatalf("%s: a secret leaked: %q %v", where, out, err)
		}
	}
}
