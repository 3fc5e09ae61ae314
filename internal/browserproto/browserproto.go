// Package browserproto is the wire format between the orchestrator's
// browser tools and guilds-browser, the helper that runs them inside an
// agent's sandbox against the Chromium kept running there. It follows
// codeproto: the request is base64 JSON on the helper's command line, or
// "@<path>" naming a request file under RequestDir when the encoding passes
// MaxArgBytes; the helper prints one Response as base64 JSON and exits 0.
package browserproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// HelperPath is where the sandbox image installs the helper.
const HelperPath = "/usr/local/bin/guilds-browser"

// RequestDir holds requests too large for the command line (codeproto's).
const RequestDir = "/run/guilds/requests"

// MaxArgBytes is the longest base64 request passed on the command line.
const MaxArgBytes = 64 << 10

// CDPAddr is where Chromium's remote debugging listens inside the sandbox.
const CDPAddr = "127.0.0.1:9222"

// ScreenshotPath is where browser_screenshot writes its JPEG.
const ScreenshotPath = "/home/agent/screenshots/latest.jpg"

// ProxyDir is the folder of a sandbox where the platform's forward proxy
// socket appears (a bind mount of the agent's folder on the host), and
// ProxySocket the socket in it. Chromium reaches the proxy through a relay
// on RelayAddr that the helper keeps running and that forwards to it: the
// sandbox itself has no network.
const (
	ProxyDir    = "/run/guilds-proxy"
	ProxySocket = ProxyDir + "/proxy.sock"
	RelayAddr   = "127.0.0.1:3128"
)

// DefaultResultMaxBytes caps a result's text when the request gives none.
const DefaultResultMaxBytes = 40000

// Request is one tool call for the helper.
type Request struct {
	Tool    string          `json:"tool"` // browser_navigate, browser_snapshot, ...
	Args    json.RawMessage `json:"args"` // the model's arguments, already validated against the schema
	RunID   string          `json:"run_id"`
	AgentID string          `json:"agent_id"`
	// MaxBytes caps Response.Text; 0 = DefaultResultMaxBytes.
	MaxBytes int `json:"max_bytes,omitempty"`
	// ProxySocket is the platform proxy's socket as the helper sees it;
	// empty = Chromium connects directly (a sandbox with its own network,
	// or the helper's tests on a host).
	ProxySocket string `json:"proxy_socket,omitempty"`
	// SeparateBrowser: Chromium runs as its own uid (sandbox.BrowserUser),
	// which this helper cannot start it as; when it does not answer, the
	// helper answers StartBrowser instead of starting it.
	SeparateBrowser bool `json:"separate_browser,omitempty"`
}

// StartArg makes the helper start Chromium (when it does not answer) and
// exit, run as the browser's uid with its HOME at BrowserHome; ProxyArg
// after it gives Chromium the relay to the platform's proxy.
const (
	StartArg = "--start-browser"
	ProxyArg = "--proxy"
	// BrowserHome is the browser uid's home and profile: a folder of the
	// sandbox's temporary space that only that uid can open.
	BrowserHome = "/tmp/guilds-browser"
)

// Response is the helper's answer. A tool-level failure is "ERROR: ..."
// text, never a non-zero exit.
type Response struct {
	Text string         `json:"text"`
	Meta map[string]any `json:"meta,omitempty"`
	// StartBrowser: the call did not run because Chromium, which runs as
	// another uid, does not answer; the orchestrator starts it (StartArg)
	// and asks again.
	StartBrowser bool `json:"start_browser,omitempty"`
}

// Errorf is a tool-level failure.
func Errorf(format string, a ...any) Response {
	return Response{Text: "ERROR: " + fmt.Sprintf(format, a...)}
}

// Encode returns the base64 JSON form of v (a Request or a Response).
func Encode(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// DecodeRequest reads a request from its JSON (a request file) or its
// base64 form (the command line).
func DecodeRequest(s []byte) (Request, error) {
	var r Request
	raw := s
	if t := strings.TrimSpace(string(s)); !strings.HasPrefix(t, "{") {
		b, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return r, fmt.Errorf("browserproto: request is neither JSON nor base64: %w", err)
		}
		raw = b
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("browserproto: request: %w", err)
	}
	if r.Tool == "" {
		return r, errors.New("browserproto: request names no tool")
	}
	return r, nil
}

// DecodeResponse reads the helper's standard output.
func DecodeResponse(out []byte) (Response, error) {
	var r Response
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		return r, fmt.Errorf("browserproto: helper output is not base64: %w", err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("browserproto: helper output: %w", err)
	}
	return r, nil
}
