package run

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Snapshot resolves and stores what the run offers, and marks it running.
// A run row not visible yet (its request has not committed) is retried. It
// heartbeats, so a worker lost while it lists remote servers is noticed at
// once; a second attempt finds the snapshot the first one stored.
func (a *Activities) Snapshot(ctx context.Context, in SnapshotInput) (SnapshotOutput, error) {
	stop := a.heartbeat(ctx)
	defer stop()
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return SnapshotOutput{}, fmt.Errorf("load run: %w", err)
	}
	if runs.Final(r.Status) {
		return SnapshotOutput{}, nonRetryable(ErrTypeRunGone, fmt.Errorf("run %s already ended (%s)", r.ID, r.Status))
	}
	snap, err := runs.SnapshotOf(ctx, a.d.DB, r.ID)
	if errors.Is(err, store.ErrNotFound) {
		snap, err = a.resolve(ctx, r)
	}
	if err != nil {
		return SnapshotOutput{}, err
	}
	if err := runs.MarkRunning(ctx, a.d.DB, r.ID); err != nil {
		return SnapshotOutput{}, err
	}
	out := SnapshotOutput{SnapshotID: snap.ID, Remaining: r.Remaining}
	for _, t := range snap.Tools {
		out.Tools = append(out.Tools, ToolRef{Name: t.Name, Class: t.Class, Idempotent: t.Idempotent, Quick: t.Quick})
	}
	a.d.Log.InfoContext(ctx, "run snapshot", "run_id", r.ID, "agent_id", r.AgentID, "tools", len(out.Tools),
		"warnings", len(snap.Warnings))
	return out, nil
}

func (a *Activities) resolve(ctx context.Context, r runs.Run) (runs.Snapshot, error) {
	agent, err := orgs.LoadAgent(ctx, a.d.DB, r.AgentID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return runs.Snapshot{}, nonRetryable(ErrTypeRunGone, errors.New("the agent was deleted"))
		}
		return runs.Snapshot{}, err
	}
	offer, err := a.d.Offerer.Offered(ctx, a.d.DB, r.AgentID, r.Trigger)
	if err != nil {
		var refused *StartRefusedError
		if errors.As(err, &refused) {
			return runs.Snapshot{}, nonRetryable(ErrTypeStartRefused, err)
		}
		return runs.Snapshot{}, fmt.Errorf("resolve offered tools: %w", err)
	}
	snap := runs.Snapshot{RunID: r.ID, Warnings: offer.Warnings, Flags: runs.Flags{
		Browser: agent.Config.Browser, Coding: agent.Config.Coding,
		Scripting: agent.Config.Scripting, Memory: agent.Config.Memory && offer.Memory,
	}}
	snap.StatePrices = a.statePrices(ctx, agent)
	seen := map[string]bool{}
	for _, t := range offer.Tools {
		if seen[t.Name] || !tools.ValidName(t.Name) {
			continue
		}
		seen[t.Name] = true
		quick := false
		if reg, ok := a.d.Tools.Lookup(t.Name); ok && t.Kind == "native" {
			// The registry is the authority on how a native tool may be retried.
			t.Idempotent, t.Class = reg.Idempotent, reg.Class
			quick = reg.Quick && reg.Idempotent
		}
		st := snapshotTool(t)
		st.Quick = quick
		snap.Tools = append(snap.Tools, st)
	}
	if snap.Flags.Scripting && seen[scripts.ToolRun] {
		if err := a.offerScripts(ctx, r, &snap, seen); err != nil {
			return runs.Snapshot{}, err
		}
	}
	// report_issue is offered on every run, whatever the bindings say.
	if !seen[issues.ToolName] {
		for _, off := range a.d.Tools.Offers(issues.ToolName) {
			snap.Tools = append(snap.Tools, runs.OfferedTool{Name: off.Name, Kind: "native",
				Description: off.Description, Schema: off.Schema, ShapedSchema: off.Shaped, Class: string(tools.ClassDefault)})
		}
	}
	return runs.SaveSnapshot(ctx, a.d.DB, snap)
}

func snapshotTool(t OfferedTool) runs.OfferedTool {
	class := t.Class
	if class == "" {
		class = tools.ClassDefault
		if t.Kind == "mcp" {
			class = tools.ClassMCP
		}
	}
	shaped := t.ShapedSchema
	if len(shaped) == 0 {
		shaped = t.Schema
	}
	return runs.OfferedTool{Name: t.Name, Kind: t.Kind, Description: t.Description, Schema: t.Schema,
		ShapedSchema: shaped, Class: string(class), Idempotent: t.Idempotent,
		ConnectionID: t.ConnectionID, ServerSlug: t.ServerSlug, RemoteName: t.RemoteName}
}

// offerScripts takes the run's snapshot of the agent's scripts and offers
// those with parameters as tools of their own.
func (a *Activities) offerScripts(ctx context.Context, r runs.Run, snap *runs.Snapshot, seen map[string]bool) error {
	if err := scripts.TakeSnapshot(ctx, a.d.DB, r.ID, r.AgentID); err != nil {
		return fmt.Errorf("snapshot the agent's scripts: %w", err)
	}
	// A script is not offered under the name of any native tool, offered or
	// not: the workflow times a call by its name (the code tools' own bounds).
	taken := maps.Clone(seen)
	for _, t := range a.d.Tools.All() {
		taken[t.Name] = true
	}
	offered, warnings, err := scripts.OfferedTools(ctx, a.d.DB, r.ID, taken)
	if err != nil {
		return fmt.Errorf("offer the agent's scripts: %w", err)
	}
	for _, t := range offered {
		seen[t.Name] = true
	}
	snap.Tools = append(snap.Tools, offered...)
	snap.Warnings = append(snap.Warnings, warnings...)
	return nil
}
