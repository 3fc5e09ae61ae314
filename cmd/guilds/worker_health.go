package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"time"

	"github.com/guilds/guilds/internal/workerhealth"
	"github.com/guilds/guilds/internal/workspaces"
)

// reportHealth writes what this worker's sandbox engine answers into
// worker_health at start and every workerhealth.Every, until ctx ends, so
// the API can tell operators whether code tools can run.
func (p *platform) reportHealth(ctx context.Context) {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := host + "-" + hex.EncodeToString(b[:])
	t := time.NewTicker(workerhealth.Every)
	defer t.Stop()
	for {
		r := workerhealth.Report{WorkerID: id, Hostname: host, Driver: string(p.cfg.Sandbox.Driver), EngineOK: true}
		if err := p.probeEngine(ctx); err != nil {
			r.EngineOK, r.EngineError = false, err.Error()
		}
		if err := workerhealth.Write(ctx, p.db, r); err != nil && ctx.Err() == nil {
			p.log.Warn("worker health: not recorded", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *platform) probeEngine(ctx context.Context) error {
	var m *workspaces.Manager
	if p.workspace != nil {
		p.workspace.mu.RLock()
		m = p.workspace.m
		p.workspace.mu.RUnlock()
	}
	if m == nil {
		return errNoWorkspaces
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return m.Probe(c)
}

var errNoWorkspaces = errors.New("the worker has no agent workspaces")
