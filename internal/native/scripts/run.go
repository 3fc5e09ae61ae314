package scripts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"path/filepath"
	"strconv"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/native/scripts/runproto"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

func (h *handlers) run(ctx context.Context, call tools.Call) (string, error) {
	var in runproto.Args
	if err := decode(call.Args, &in); err != nil {
		return "", err
	}
	if err := CheckName(in.Name); err != nil {
		return "", err
	}
	if h.d.Workspace == nil {
		return "", sandbox.ErrNoWorkspace
	}
	if call.RunID == "" {
		return "", errors.New("script_run runs in the agent's workspace during a run: this call has no run id")
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	e, ok, err := RunEntry(ctx, h.d.DB, call.RunID, in.Name)
	if err != nil {
		return "", err
	}
	if !ok {
		if _, err := Get(ctx, h.d.DB, a.ID, in.Name); err == nil {
			return "", artifacts.OnField("name", "script %s was saved after this run started: it runs from the next run", in.Name)
		}
		return "", artifacts.Errorf(http.StatusNotFound, "script %s not found (script_list lists yours)", in.Name)
	}
	args := bytes.TrimSpace(in.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if len(e.Parameters) > 0 {
		schema, err := tools.CompileSchema(e.Parameters)
		if err != nil {
			return "", artifacts.OnField("parameters", "script %s: its parameters schema no longer compiles: %v", e.Name, err)
		}
		if args, err = schema.Prepare(args); err != nil {
			return "", artifacts.OnField("arguments", "arguments of script %s: %v", e.Name, err)
		}
	}
	// The snapshot's source, whatever the file holds now: another run, or
	// the agent's own shell, may have changed it.
	if err := h.d.Workspace.CopyTo(ctx, a.ID, runproto.Path(e.Name), []byte(e.Source), fileMode); err != nil {
		return "", fmt.Errorf("write %s into the workspace: %w", runproto.Path(e.Name), err)
	}
	rawArgs, _ := json.Marshal(runproto.Args{Name: e.Name, Arguments: args, TimeoutSeconds: h.d.Timeout.Seconds()})
	req := codeproto.Request{Tool: runproto.Tool, Args: rawArgs, RunID: call.RunID, AgentID: a.ID, Step: call.Seq,
		CallID: code.SafeFileName(call.CallID), MaxBytes: h.d.MaxResultBytes}
	if req.CallID == "" {
		req.CallID = "seq-" + strconv.Itoa(call.Seq)
	}
	if h.d.Env != nil {
		envCall := call
		envCall.AgentID = a.ID
		env, err := h.d.Env.Env(ctx, envCall)
		if err != nil {
			return "", fmt.Errorf("load the agent's secrets: %w", err)
		}
		req.Env = env
	}
	resp, err := h.exec(ctx, a.ID, req)
	if err != nil {
		return "", err
	}
	for k, v := range resp.Meta {
		tools.SetMetadata(ctx, k, v)
	}
	tools.SetMetadata(ctx, "script_hash", e.Hash)
	return resp.Text, nil
}

// exec passes one request to guilds-script-run and decodes its answer.
// Secrets never go on the command line: the sandbox's process list shows it.
func (h *handlers) exec(ctx context.Context, agentID string, req codeproto.Request) (codeproto.Response, error) {
	timeout := runproto.Timeout + execMargin
	if h.d.Timeout > 0 && h.d.Timeout < runproto.Timeout {
		timeout = h.d.Timeout + execMargin
	}
	return helper.Call[codeproto.Request, codeproto.Response](ctx, h.d.Workspace, agentID, req, helper.Options{
		Binary: h.helper(), Helper: "script helper", What: "the script", Timeout: timeout, Secret: len(req.Env) > 0})
}

// helper is guilds-script-run's path: on the local development driver,
// whose workspace names the host's guilds-code (code.HelperLocator), the
// one installed beside it.
func (h *handlers) helper() string {
	if loc, ok := h.d.Workspace.(code.HelperLocator); ok && loc.CodeHelper() != "" {
		return filepath.Join(filepath.Dir(loc.CodeHelper()), path.Base(runproto.HelperPath))
	}
	return h.d.Helper
}
