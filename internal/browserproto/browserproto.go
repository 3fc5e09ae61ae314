// Package browserproto is the wire format between the orchestrator's
// browser tools and guilds-browser, the helper that runs them inside an
// agent's sandbox against the Chromium kept running there. Requests and
// responses travel through the helper lane, sandbox/helper.
package browserproto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// HelperPath is where the sandbox image installs the helper.
const HelperPath = "/usr/local/bin/guilds-browser"

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

// Validate is what the helper checks of a request it decodes.
func (r Request) Validate() error {
	if r.Tool == "" {
		return errors.New("request names no tool")
	}
	return nil
}
