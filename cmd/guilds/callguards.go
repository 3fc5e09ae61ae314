package main

import (
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/callrate"
)

// callGuards are what hold back a run's tool calls besides its budget: the
// logins' circuit breaker (GUILDS_BREAKER_*) and the organisations' rates of
// tool calls (set through the API, counted in Redis on Redis's clock).
func (p *platform) callGuards() (*breaker.Breaker, *callrate.Limiter) {
	bc := p.cfg.Breaker
	s := breaker.Settings{Failures: bc.Failures, CoolOff: bc.CoolOff, MaxCoolOff: bc.MaxCoolOff}
	if bc.Failures == 0 {
		s.Failures = -1 // off
	}
	var rate *callrate.Limiter
	if p.redis != nil {
		rate = callrate.NewLimiter(p.redis, nil)
	}
	return breaker.New(p.db, s, nil), rate
}
