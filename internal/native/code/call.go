package code

import (
	"context"
	"fmt"
	"strconv"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

// handler returns the handler of one code tool.
func (d Deps) handler(tool string) tools.Handler {
	return func(ctx context.Context, call tools.Call) (string, error) {
		if d.Workspace == nil {
			return "", sandbox.ErrNoWorkspace
		}
		if call.AgentID == "" || call.RunID == "" {
			return "", fmt.Errorf("%s runs in an agent's workspace during a run: this call has no agent or run id", tool)
		}
		req := codeproto.Request{Tool: tool, Args: call.Args, RunID: call.RunID, CallID: call.CallID,
			AgentID: call.AgentID, Step: call.Seq, MaxBytes: d.MaxResultBytes}
		if req.CallID = SafeFileName(call.CallID); req.CallID == "" {
			req.CallID = "seq-" + strconv.Itoa(call.Seq)
		}
		if sp, ok := d.Workspace.(ShellPreparer); ok && tool == ToolShell {
			if err := sp.BeforeShell(ctx, call.AgentID); err != nil {
				return "", fmt.Errorf("prepare the shell call: %w", err)
			}
		}
		if tool == ToolShell && d.Env != nil {
			env, err := d.Env.Env(ctx, call)
			if err != nil {
				return "", fmt.Errorf("load the agent's secrets: %w", err)
			}
			req.Env = env
		}
		if tool == ToolFileRead && d.DB != nil {
			prior, err := priorReads(ctx, d.DB, call.RunID, call.Seq)
			if err != nil {
				return "", fmt.Errorf("read this run's earlier file reads: %w", err)
			}
			req.PriorReads = prior
		}
		resp, err := d.run(ctx, call.AgentID, req)
		if err != nil {
			return "", err
		}
		for k, v := range resp.Meta {
			tools.SetMetadata(ctx, k, v)
		}
		if tool == ToolFileRead {
			tools.SetMetadata(ctx, MetaBytes, len(resp.Text))
		}
		return resp.Text, nil
	}
}

// MetaBytes is the metadata field that records how many bytes a file_read
// returned (read_bytes_unedited sums it).
const MetaBytes = "bytes"

// run passes one request to the helper and decodes its answer. Secrets
// never go on the command line: the sandbox's process list shows it.
func (d Deps) run(ctx context.Context, agentID string, req codeproto.Request) (codeproto.Response, error) {
	bin := d.Helper
	if loc, ok := d.Workspace.(HelperLocator); ok && loc.CodeHelper() != "" {
		bin = loc.CodeHelper()
	}
	timeout, _ := ExecTimeout(req.Tool, req.Args)
	// The helper sets GUILD_RUN_ID and GUILD_AGENT_ID from the request.
	return helper.Call[codeproto.Request, codeproto.Response](ctx, d.Workspace, agentID, req, helper.Options{
		Binary: bin, Helper: "code helper", What: req.Tool, Timeout: timeout, Secret: len(req.Env) > 0})
}

// maxCallIDName bounds the call id as it names the shell log.
const maxCallIDName = 64

// SafeFileName makes a provider's call id safe to name the call's log file
// (/home/agent/.runs/<run id>/<call id>.log): letters, digits, '_' and '-'
// are kept, anything else becomes '_'.
func SafeFileName(id string) string {
	b := []byte(id)
	if len(b) > maxCallIDName {
		b = b[:maxCallIDName]
	}
	for i, c := range b {
		if !fileNameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func fileNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
