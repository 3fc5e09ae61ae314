package mcppool

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
)

// PeerError: the server (or the command of a stdio one) cannot be used as
// an MCP server: a command that is not on this machine, a URL that answers
// an HTML page, a body that is not JSON-RPC. Reason is one line for the
// operator and never holds a header, an environment value or a body.
type PeerError struct {
	Server string // the catalog slug
	Reason string
	err    error
}

func (e *PeerError) Error() string { return label(e.Server) + ": " + e.Reason }
func (e *PeerError) Unwrap() error { return e.err }

// commandError names a stdio command that could not be started; the
// arguments and the environment stay out (they may hold a login's values).
func commandError(info ServerInfo, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		return &PeerError{Server: info.Slug, Reason: fmt.Sprintf("the server's command %q was not found on this machine", info.Command), err: err}
	case errors.Is(err, os.ErrPermission):
		return &PeerError{Server: info.Slug, Reason: fmt.Sprintf("the server's command %q may not be run by the stdio user (permission denied)", info.Command), err: err}
	}
	return fmt.Errorf("%s: the server's command %q could not be started: %w", label(info.Slug), info.Command, err)
}

// explain turns what mcp-go says of a peer that does not speak MCP into a
// *PeerError; any other error is returned as it is. opening: err ended the
// opening of a session (the handshake), not a request on an open one.
func explain(info ServerInfo, err error, opening bool) error {
	var pe *PeerError
	if err == nil {
		return nil
	}
	if errors.As(err, &pe) {
		return pe
	}
	msg := err.Error()
	reason := ""
	switch {
	case errors.Is(err, transport.ErrLegacySSEServer):
		reason = "answered the MCP handshake with an HTTP 4xx: no Streamable HTTP MCP endpoint at this URL " +
			"(a server of the older HTTP+SSE transport is added with transport sse)"
	case strings.Contains(msg, "failed to decode response"), strings.Contains(msg, "response should contain RPC id"):
		reason = "answered with something that is not a JSON-RPC message, not MCP"
	case strings.Contains(msg, "unexpected content type: "):
		_, ct, _ := strings.Cut(msg, "unexpected content type: ")
		media, _, _ := mime.ParseMediaType(strings.TrimSpace(ct))
		if media == "" {
			media = "no content type"
		}
		reason = "answered with " + media + ", not MCP (JSON or an event stream): is the URL the server's MCP endpoint?"
	case opening && info.Transport == "stdio" && isSessionLost(err):
		reason = "the process ended before it answered the MCP handshake"
	}
	if reason == "" {
		return err
	}
	return &PeerError{Server: info.Slug, Reason: reason, err: err}
}

// answerCheck is the round tripper in front of every MCP request over HTTP:
// an HTML page (a web site, a login portal, a proxy's 404), whatever its
// status, fails the request at once with a *PeerError, instead of mcp-go's
// "unexpected content type" or its guess that a 4xx means a server of the
// older transport. A 401 stays what it is: the login flows read it. Other
// content types are left to mcp-go, which refuses them at once too (a server
// may answer a notification with a bare 200), and explain words its error.
type answerCheck struct {
	base http.RoundTripper
	slug string
}

func checkAnswers(hc *http.Client, slug string) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := *hc
	c.Transport = &answerCheck{base: base, slug: slug}
	return &c
}

func (a *answerCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := a.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || res.StatusCode == http.StatusUnauthorized {
		return res, err
	}
	if media, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); media != "text/html" && media != "application/xhtml+xml" {
		return res, nil
	}
	_ = res.Body.Close()
	reason := "answered with an HTML page, not MCP"
	if res.StatusCode != http.StatusOK {
		reason = fmt.Sprintf("answered HTTP %d with an HTML page, not MCP", res.StatusCode)
	}
	return nil, &PeerError{Server: a.slug, Reason: reason + ": is the URL the server's MCP endpoint?"}
}
