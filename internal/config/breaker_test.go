package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadBreaker(t *testing.T) {
	env := func(kv map[string]string) func(string, string) string {
		return func(name, def string) string {
			if v, ok := kv[name]; ok {
				return v
			}
			return def
		}
	}
	b, err := loadBreaker(env(nil))
	if err != nil || b != (Breaker{Failures: 5, CoolOff: time.Minute, MaxCoolOff: 30 * time.Minute}) {
		t.Fatalf("defaults: %+v %v", b, err)
	}
	b, err = loadBreaker(env(map[string]string{"GUILDS_BREAKER_FAILURES": "0", "GUILDS_BREAKER_COOLOFF": "10s", "GUILDS_BREAKER_MAX_COOLOFF": "10s"}))
	if err != nil || b != (Breaker{Failures: 0, CoolOff: 10 * time.Second, MaxCoolOff: 10 * time.Second}) {
		t.Fatalf("set: %+v %v", b, err)
	}
	for kv, want := range map[[2]string]string{
		{"GUILDS_BREAKER_FAILURES", "-1"}:      "GUILDS_BREAKER_FAILURES must be a whole number",
		{"GUILDS_BREAKER_FAILURES", "five"}:    "GUILDS_BREAKER_FAILURES must be a whole number",
		{"GUILDS_BREAKER_COOLOFF", "0s"}:       "GUILDS_BREAKER_COOLOFF must be a duration",
		{"GUILDS_BREAKER_COOLOFF", "1h"}:       "GUILDS_BREAKER_MAX_COOLOFF (30m0s) must be at least",
		{"GUILDS_BREAKER_MAX_COOLOFF", "soon"}: "GUILDS_BREAKER_MAX_COOLOFF must be a duration",
	} {
		if _, err := loadBreaker(env(map[string]string{kv[0]: kv[1]})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", kv[0], kv[1], err, want)
		}
	}
}
