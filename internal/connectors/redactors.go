package connectors

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/guilds/guilds/internal/tools"
)

// A call's answer is redacted against the values it used, which are nearly
// always the same one token from one call to the next; building the redactor
// (every encoded form of every value, its bitsets) cost more than the scan.
// redactors keeps the ones built, by their values, so a call with the same
// values reuses one. A *tools.Redactor is read-only once built. The values
// kept here are ones the resolver holds in memory anyway (ADR 0202); nothing
// is written anywhere.

// maxRedactors bounds the kept redactors (one per login in use, roughly);
// past it the set starts again.
const maxRedactors = 1024

type redactorSet struct {
	mu sync.Mutex
	m  map[string]*tools.Redactor
}

var redactors redactorSet

// of is the redactor of vals, built once per distinct list of values.
func (s *redactorSet) of(vals []string) *tools.Redactor {
	key := strings.Join(vals, "\x00")
	s.mu.Lock()
	red, ok := s.m[key]
	s.mu.Unlock()
	if ok {
		return red
	}
	// Values too short to redact are the run's redactor's to report, once.
	red = tools.NewRedactor(vals, slog.New(slog.DiscardHandler))
	s.mu.Lock()
	if s.m == nil || len(s.m) >= maxRedactors {
		s.m = map[string]*tools.Redactor{}
	}
	s.m[key] = red
	s.mu.Unlock()
	return red
}
