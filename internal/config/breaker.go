package config

import (
	"fmt"
	"strconv"
	"time"
)

// Breaker tunes the circuit breaker of each login (internal/breaker).
type Breaker struct {
	// Failures (GUILDS_BREAKER_FAILURES) is how many failed calls in a row
	// pause a login; 0 turns the breaker off.
	Failures int
	// CoolOff (GUILDS_BREAKER_COOLOFF) is the first pause; each failed
	// trial call doubles it, up to MaxCoolOff (GUILDS_BREAKER_MAX_COOLOFF).
	CoolOff, MaxCoolOff time.Duration
}

// Breaker defaults; the same as internal/breaker's.
const (
	DefaultBreakerFailures   = 5
	DefaultBreakerCoolOff    = 60 * time.Second
	DefaultBreakerMaxCoolOff = 30 * time.Minute
)

func loadBreaker(or func(name, def string) string) (Breaker, error) {
	b := Breaker{}
	v := or("GUILDS_BREAKER_FAILURES", strconv.Itoa(DefaultBreakerFailures))
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxWorkerLimit {
		return b, fmt.Errorf("GUILDS_BREAKER_FAILURES must be a whole number from 0 (no breaker) to %d, got %q", maxWorkerLimit, v)
	}
	b.Failures = n
	if b.CoolOff, err = duration(or, "GUILDS_BREAKER_COOLOFF", DefaultBreakerCoolOff); err != nil {
		return b, err
	}
	if b.MaxCoolOff, err = duration(or, "GUILDS_BREAKER_MAX_COOLOFF", DefaultBreakerMaxCoolOff); err != nil {
		return b, err
	}
	if b.MaxCoolOff < b.CoolOff {
		return b, fmt.Errorf("GUILDS_BREAKER_MAX_COOLOFF (%s) must be at least GUILDS_BREAKER_COOLOFF (%s)", b.MaxCoolOff, b.CoolOff)
	}
	return b, nil
}

// duration reads a duration of at least a second, at most a day.
func duration(or func(name, def string) string, name string, def time.Duration) (time.Duration, error) {
	v := or(name, def.String())
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > 24*time.Hour {
		return 0, fmt.Errorf("%s must be a duration from 1s to 24h such as %s, got %q", name, def, v)
	}
	return d, nil
}
