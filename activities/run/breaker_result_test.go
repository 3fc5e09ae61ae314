package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/tools"
)

// What the breaker counts: the service not answering fails, any answer
// resets, and what says nothing about the service is neutral.
func TestCallResult(t *testing.T) {
	t.Parallel()
	live := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want breaker.Result
	}{
		{"answered", nil, breaker.Answered},
		{"pool timeout", &mcppool.TimeoutError{Op: "tools/call", After: time.Second}, breaker.Failed},
		{"adapter timeout", &host.TimeoutError{Server: "coingecko", After: time.Second}, breaker.Failed},
		{"adapter 503", fmt.Errorf("coingecko: %w", &adapters.HTTPError{Status: 503}), breaker.Failed},
		{"adapter 429", &adapters.HTTPError{Status: 429}, breaker.Failed},
		{"adapter 404", &adapters.HTTPError{Status: 404, Body: "no such coin"}, breaker.Answered},
		{"mcp 502", transport.NewError(errors.New("request failed with status 502: bad gateway")), breaker.Failed},
		{"sse 500", transport.NewError(errors.New("unexpected status code: 500")), breaker.Failed},
		{"mcp 400", transport.NewError(errors.New("request failed with status 400: no")), breaker.Answered},
		{"mcp refused", transport.NewError(&url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNREFUSED}), breaker.Failed},
		{"adapter refused", &url.Error{Op: "Get", URL: "http://x", Err: syscall.ECONNREFUSED}, breaker.Failed},
		{"cut short", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), breaker.Failed},
		{"reconnect", &connectors.ErrReconnectRequired{Server: "notion", Code: "token_rejected"}, breaker.Neutral},
		{"bad arguments", &tools.ArgumentError{Problems: []string{"query: required"}}, breaker.Neutral},
		{"no redactor", remote.ErrNoRedactor, breaker.Neutral},
		{"json-rpc error", fmt.Errorf("%w: query must be a string", mcp.ErrInvalidParams), breaker.Answered},
		{"handler error", fmt.Errorf("%w: boom", mcp.ErrInternalError), breaker.Answered},
		{"unknown", errors.New("something else"), breaker.Neutral},
	} {
		if got := callResult(live, tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if got := callResult(cancelled, transport.NewError(context.Canceled)); got != breaker.Neutral {
		t.Errorf("the run's own cancellation: %v, want neutral", got)
	}
}
