package mcppool

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// UnlistedError: a server that needs no login could not list its tools, so
// it was not turned on. Reason is one line meant for the operator.
type UnlistedError struct {
	Server string
	Reason string
}

func (e *UnlistedError) Error() string {
	return e.Server + " could not list its tools: " + e.Reason
}

// CheckOpen lists the tools of a server that needs no login (no credential,
// no values) before its login is marked connected: an http or sse server is
// called, a stdio server is started for the occasion and stopped. A command
// that does not exist, a server that does not answer or lists nothing is an
// *UnlistedError, and nothing is stored.
func (k Checker) CheckOpen(ctx context.Context, row connstore.Connection) (connections.Checked, error) {
	info, err := k.load(ctx, row)
	if err != nil {
		return connections.Checked{}, err
	}
	listed, err := ListInjected(ctx, k.HTTP, info, connectors.Injection{})
	switch {
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return connections.Checked{}, ErrAddressRefused
	case errors.Is(err, ErrKeyRejected):
		return connections.Checked{}, &UnlistedError{Server: info.Slug, Reason: "it asks for a login (401): its catalog row needs auth token or oauth"}
	case err != nil:
		k.log().Warn("mcp connect: a server that needs no login did not list its tools", "server", info.Slug, "err", oneLine(err))
		return connections.Checked{}, &UnlistedError{Server: info.Slug, Reason: unlistedReason(info, err)}
	case len(listed) == 0:
		return connections.Checked{}, &UnlistedError{Server: info.Slug, Reason: "it listed no tool"}
	}
	return checked{info: info, listed: listed}.forService(), nil
}

// unlistedReason says why a listing failed in the operator's terms.
func unlistedReason(info ServerInfo, err error) string {
	var timeout *TimeoutError
	var peer *PeerError
	switch {
	case errors.As(err, &peer):
		return peer.Reason
	case errors.As(err, &timeout):
		return fmt.Sprintf("it did not answer within %s (config.list_timeout_seconds of its catalog row raises the bound)", timeout.bound())
	case errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	case info.Transport == "stdio":
		return "the process did not answer the MCP handshake (" + oneLine(err) + ")"
	}
	return "it did not answer as an MCP server (" + oneLine(err) + ")"
}
