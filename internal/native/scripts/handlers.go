package scripts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/native/scripts/runproto"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

type handlers struct{ d Deps }

// fileMode is a materialised script's permission.
const fileMode = 0o644

// agent loads the calling agent and refuses one whose scripting is off.
func (h *handlers) agent(ctx context.Context, call tools.Call) (orgs.Agent, error) {
	if call.AgentID == "" {
		return orgs.Agent{}, errors.New("script tools need an agent: this call has no agent id")
	}
	a, err := orgs.LoadAgent(ctx, h.d.DB, call.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return a, artifacts.Errorf(http.StatusNotFound, "agent %s not found", call.AgentID)
	}
	if err != nil {
		return a, err
	}
	if !a.Config.Scripting {
		return a, artifacts.Errorf(http.StatusForbidden, "scripting is off for this agent (config.scripting)")
	}
	if call.RunID != "" {
		if err := TakeSnapshot(ctx, h.d.DB, call.RunID, a.ID); err != nil {
			return a, fmt.Errorf("snapshot this run's scripts: %w", err)
		}
	}
	return a, nil
}

func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return artifacts.OnField("arguments", "arguments: %v", err)
	}
	return nil
}

func (h *handlers) create(ctx context.Context, call tools.Call) (string, error) {
	var in Input
	if err := decode(call.Args, &in); err != nil {
		return "", err
	}
	if err := in.Check(); err != nil {
		return "", err
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	s, created, err := Create(ctx, h.d.DB, a, in, func(tx pgx.Tx, s Script) error {
		if call.RunID == "" {
			return nil
		}
		if err := putEntry(ctx, tx, call.RunID, s); err != nil {
			return err
		}
		if h.d.Workspace == nil {
			return nil
		}
		if err := h.d.Workspace.CopyTo(ctx, a.ID, runproto.Path(s.Name), []byte(s.Source), fileMode); err != nil {
			return fmt.Errorf("write %s into the workspace: %w", runproto.Path(s.Name), err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	verb := "replaced"
	if created {
		verb = "created"
	}
	out := fmt.Sprintf("%s script %s (%d bytes, sha256 %s) at %s; run it with script_run", verb, s.Name, s.Size, s.Hash[:12], runproto.Path(s.Name))
	if len(s.Parameters) > 0 {
		out += fmt.Sprintf("; from your next run it is also the tool %s", s.Name)
	}
	return out, nil
}

type listEntry struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Size        int       `json:"size"`
	Parameters  bool      `json:"parameters,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
	// ThisRun says what this run runs when it differs from the row.
	ThisRun string `json:"this_run,omitempty"`
}

func (h *handlers) list(ctx context.Context, call tools.Call) (string, error) {
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	rows, err := List(ctx, h.d.DB, a.ID)
	if err != nil {
		return "", err
	}
	snap := map[string]Entry{}
	if call.RunID != "" {
		entries, err := RunEntries(ctx, h.d.DB, call.RunID)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			snap[e.Name] = e
		}
	}
	out := make([]listEntry, 0, len(rows))
	for _, s := range rows {
		e := listEntry{Name: s.Name, Description: s.Description, Size: s.Size, Parameters: len(s.Parameters) > 0, UpdatedAt: s.UpdatedAt.UTC()}
		if call.RunID != "" {
			if got, ok := snap[s.Name]; !ok {
				e.ThisRun = "not in this run: saved after it started, it runs from the next run"
			} else if got.Hash != s.Hash {
				e.ThisRun = "changed since this run started: this run keeps running the version it started with"
			}
			delete(snap, s.Name)
		}
		out = append(out, e)
	}
	for _, e := range snap {
		out = append(out, listEntry{Name: e.Name, Description: e.Description, Size: len(e.Source), Parameters: len(e.Parameters) > 0,
			ThisRun: "deleted from the catalog since this run started: this run can still run it"})
	}
	b, err := json.Marshal(map[string]any{"scripts": out})
	return string(b), err
}

type nameArg struct {
	Name string `json:"name"`
}

func (h *handlers) read(ctx context.Context, call tools.Call) (string, error) {
	var in nameArg
	if err := decode(call.Args, &in); err != nil {
		return "", err
	}
	if err := CheckName(in.Name); err != nil {
		return "", err
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	if call.RunID != "" {
		if e, ok, err := RunEntry(ctx, h.d.DB, call.RunID, in.Name); err != nil || ok {
			return e.Source, err
		}
	}
	s, err := Get(ctx, h.d.DB, a.ID, in.Name)
	return s.Source, err
}

func (h *handlers) delete(ctx context.Context, call tools.Call) (string, error) {
	var in nameArg
	if err := decode(call.Args, &in); err != nil {
		return "", err
	}
	if err := CheckName(in.Name); err != nil {
		return "", err
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	tx, err := h.d.DB.Begin(ctx)
	if err != nil {
		return "", store.Map(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rowErr := Delete(ctx, tx, a.ID, in.Name)
	if rowErr != nil && !isNotFound(rowErr) {
		return "", rowErr
	}
	inRun := false
	if call.RunID != "" {
		if inRun, err = dropEntry(ctx, tx, call.RunID, in.Name); err != nil {
			return "", err
		}
	}
	if rowErr != nil && !inRun {
		return "", rowErr
	}
	if h.d.Workspace != nil {
		res, err := h.d.Workspace.Exec(ctx, a.ID, sandbox.ExecRequest{Cmd: []string{"rm", "-f", "--", runproto.Path(in.Name)},
			Timeout: 30 * time.Second, MaxOutput: 4096})
		if err != nil {
			return "", fmt.Errorf("remove %s from the workspace: %w", runproto.Path(in.Name), err)
		}
		if res.ExitCode != 0 {
			return "", fmt.Errorf("remove %s from the workspace: exit %d: %s", runproto.Path(in.Name), res.ExitCode, helper.StderrTail(res.Stderr))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return "", store.Map(err)
	}
	return fmt.Sprintf("deleted script %s", in.Name), nil
}

func isNotFound(err error) bool {
	var ae *artifacts.Error
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
