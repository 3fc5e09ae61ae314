package code

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// maxHelperOutput caps what is read of the helper's stdout and stderr: its
// answer is a capped text plus a few metadata fields, base64 encoded.
const maxHelperOutput = 1 << 20

// requestMode is the permission of a request file: the helper, which runs
// as the workspace's user, reads and deletes it; the browser's uid cannot
// read it (it may carry granted secrets).
const requestMode = 0o600

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
			env, err := d.Env.Env(ctx, call.AgentID)
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

// run passes one request to the helper and decodes its answer.
func (d Deps) run(ctx context.Context, agentID string, req codeproto.Request) (codeproto.Response, error) {
	var none codeproto.Response
	arg, err := codeproto.EncodeRequest(req)
	if err != nil {
		return none, fmt.Errorf("encode the %s request: %w", req.Tool, err)
	}
	// Secrets never go on the command line: the sandbox's process list
	// shows it.
	if len(arg) > codeproto.MaxArgBytes || len(req.Env) > 0 {
		if arg, err = d.writeRequest(ctx, agentID, req); err != nil {
			return none, err
		}
	}
	helper := d.Helper
	if loc, ok := d.Workspace.(HelperLocator); ok && loc.CodeHelper() != "" {
		helper = loc.CodeHelper()
	}
	timeout, _ := ExecTimeout(req.Tool, req.Args)
	// No environment of the orchestrator's goes with the exec: the helper
	// sets GUILD_RUN_ID and GUILD_AGENT_ID from the request itself.
	res, err := d.Workspace.Exec(ctx, agentID, sandbox.ExecRequest{
		Cmd: []string{helper, arg}, Timeout: timeout, MaxOutput: maxHelperOutput})
	if errors.Is(err, sandbox.ErrNoWorkspace) {
		return none, sandbox.ErrNoWorkspace
	}
	if err != nil {
		return none, fmt.Errorf("run %s in the workspace: %w", req.Tool, err)
	}
	if res.TimedOut {
		return none, fmt.Errorf("%s did not finish within %s", req.Tool, timeout)
	}
	if res.ExitCode != 0 {
		return none, fmt.Errorf("the code helper failed (exit %d)%s", res.ExitCode, StderrTail(res.Stderr))
	}
	if res.Truncated {
		return none, errors.New("the code helper's answer was too long")
	}
	resp, err := codeproto.DecodeResponse(res.Stdout)
	if err != nil {
		return none, fmt.Errorf("the code helper's answer: %w", err)
	}
	return resp, nil
}

// writeRequest writes a request too long for the command line through the
// sandbox file API and returns the helper's argument that names it, by its
// sandbox path (the helper maps it, on the local driver too).
func (d Deps) writeRequest(ctx context.Context, agentID string, req codeproto.Request) (string, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("encode the %s request: %w", req.Tool, err)
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	p := path.Join(codeproto.RequestDir, hex.EncodeToString(b[:])+".json")
	if err := d.Workspace.CopyTo(ctx, agentID, p, raw, requestMode); errors.Is(err, sandbox.ErrNoWorkspace) {
		return "", sandbox.ErrNoWorkspace
	} else if err != nil {
		return "", fmt.Errorf("write the %s request into the workspace: %w", req.Tool, err)
	}
	return "@" + p, nil
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

// StderrTail is ": " and the last non-empty line of a helper's stderr,
// clipped; "" when there is none.
func StderrTail(stderr []byte) string {
	lines := bytes.Split(bytes.TrimSpace(stderr), []byte("\n"))
	line := strings.TrimSpace(string(lines[len(lines)-1]))
	if line == "" {
		return ""
	}
	if len(line) > 300 {
		line = strings.ToValidUTF8(line[:300], "") + "…"
	}
	return ": " + line
}
