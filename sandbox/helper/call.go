package helper

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// DefaultMaxOutput caps what is read of a helper's stdout and stderr when
// Options gives no cap: an answer is a capped text and a few metadata
// fields, base64 encoded.
const DefaultMaxOutput = 1 << 20

// Options describe one helper exec.
type Options struct {
	// Binary is the helper's path as the sandbox sees it.
	Binary string
	// Helper names the helper in errors ("the code helper failed").
	Helper string
	// What names the request in errors: the tool, or "the script".
	What string
	// Timeout bounds the exec; the driver stops the helper past it.
	Timeout time.Duration
	// MaxOutput caps stdout and stderr; 0 = DefaultMaxOutput.
	MaxOutput int
	// Secret: the request carries secrets, so it always travels as a
	// request file, never on the command line.
	Secret bool
}

// Call runs one request through the helper in agentID's workspace and
// decodes its answer. A workspace that answers sandbox.ErrNoWorkspace fails
// the call with that error, unwrapped.
func Call[Req, Resp any](ctx context.Context, ws sandbox.Workspace, agentID string, req Req, o Options) (Resp, error) {
	var none Resp
	if ws == nil {
		return none, sandbox.ErrNoWorkspace
	}
	arg, err := Encode(req)
	if err != nil {
		return none, fmt.Errorf("encode the %s request: %w", o.What, err)
	}
	if len(arg) > MaxArgBytes || o.Secret {
		if arg, err = writeRequest(ctx, ws, agentID, req, o.What); err != nil {
			return none, err
		}
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	// No environment of the orchestrator's goes with the exec: whatever the
	// helper needs is in the request.
	res, err := ws.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: []string{o.Binary, arg}, Timeout: o.Timeout, MaxOutput: o.MaxOutput})
	if errors.Is(err, sandbox.ErrNoWorkspace) {
		return none, sandbox.ErrNoWorkspace
	}
	if err != nil {
		return none, fmt.Errorf("run %s in the workspace: %w", o.What, err)
	}
	if err := Check(res, o); err != nil {
		return none, err
	}
	resp, err := Decode[Resp](res.Stdout)
	if err != nil {
		return none, fmt.Errorf("the %s's answer: %w", o.Helper, err)
	}
	return resp, nil
}

// Check turns an exec that did not end in a whole answer into an error:
// past its timeout, a non-zero exit (with stderr's last line), or an output
// cut at its cap.
func Check(res sandbox.ExecResult, o Options) error {
	switch {
	case res.TimedOut:
		return fmt.Errorf("%s did not finish within %s", o.What, o.Timeout)
	case res.ExitCode != 0:
		return fmt.Errorf("the %s failed (exit %d)%s", o.Helper, res.ExitCode, StderrTail(res.Stderr))
	case res.Truncated:
		return fmt.Errorf("the %s's answer was too long", o.Helper)
	}
	return nil
}

// writeRequest writes req through the sandbox file API and returns the
// helper's argument naming it, by its sandbox path (the helper maps it on
// the local driver).
func writeRequest(ctx context.Context, ws sandbox.Workspace, agentID string, req any, what string) (string, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("encode the %s request: %w", what, err)
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	p := path.Join(RequestDir, hex.EncodeToString(b[:])+".json")
	if err := ws.CopyTo(ctx, agentID, p, raw, RequestMode); errors.Is(err, sandbox.ErrNoWorkspace) {
		return "", sandbox.ErrNoWorkspace
	} else if err != nil {
		return "", fmt.Errorf("write the %s request into the workspace: %w", what, err)
	}
	return "@" + p, nil
}

// maxTail bounds the stderr line an error quotes.
const maxTail = 300

// StderrTail is ": " and the last non-empty line of a helper's stderr,
// clipped; "" when there is none.
func StderrTail(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	line := strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
	if line == "" {
		return ""
	}
	if len(line) > maxTail {
		line = strings.ToValidUTF8(line[:maxTail], "") + "…"
	}
	return ": " + line
}
