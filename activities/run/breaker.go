package run

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/runs"
)

// loginGate asks the login's circuit breaker whether the call may go; when
// it may not, why is the result the model reads. A breaker that cannot be
// read lets the call go: it protects the service, it guards no secret.
func (a *Activities) loginGate(ctx context.Context, t runs.OfferedTool) (g breaker.Gate, why string) {
	if t.ConnectionID == "" {
		return breaker.Gate{}, "" // no login to pause; Record ignores a gate that did not allow
	}
	g, err := a.d.Breaker.Check(ctx, t.ConnectionID)
	if err != nil {
		a.d.Log.WarnContext(ctx, "the login's breaker could not be read; the call goes", "connection_id", t.ConnectionID, "err", err)
		return breaker.Gate{Allowed: true}, ""
	}
	if g.Allowed {
		return g, ""
	}
	server := t.ServerSlug
	if server == "" {
		server = "this service"
	}
	a.d.Log.InfoContext(ctx, "call refused: the login is paused", "connection_id", t.ConnectionID, "tool", t.Name,
		"failures", g.Failures, "until", g.Until)
	return g, g.Refusal(server)
}

// countCall tells the login's breaker how the call went.
func (a *Activities) countCall(ctx context.Context, t runs.OfferedTool, g breaker.Gate, err error) {
	r := callResult(ctx, err)
	if rerr := a.d.Breaker.Record(context.WithoutCancel(ctx), t.ConnectionID, g, r); rerr != nil {
		a.d.Log.WarnContext(ctx, "the login's breaker could not be updated", "connection_id", t.ConnectionID, "err", rerr)
	}
}

// callResult sorts a remote call's error for the breaker: the service did
// not answer (a transport error, a timeout, a 5xx, 408 or 429) is a
// failure; an answer of any kind, a tool's own error result, a JSON-RPC
// error and a 4xx included, shows it is up; anything else (nothing sent, bad
// arguments, a login to reconnect, the run's own cancellation) says nothing
// about it.
func callResult(ctx context.Context, err error) breaker.Result {
	if err == nil {
		return breaker.Answered
	}
	if ctx.Err() != nil {
		return breaker.Neutral
	}
	var (
		mt *mcppool.TimeoutError
		ht *host.TimeoutError
		he *adapters.HTTPError
		te *transport.Error
		ue *url.Error
		ne net.Error
	)
	switch {
	case errors.As(err, &mt), errors.As(err, &ht):
		return breaker.Failed
	case jsonRPCError(err):
		return breaker.Answered
	case errors.As(err, &he):
		return byStatus(he.Status)
	case errors.As(err, &te):
		if status, ok := statusIn(te.Error()); ok {
			return byStatus(status)
		}
		return breaker.Failed
	case errors.As(err, &ue), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return breaker.Failed
	}
	return breaker.Neutral
}

// jsonRPCError reports an error the MCP server answered with (mcp-go maps
// the JSON-RPC codes to these); a tool handler's own Go error is an
// internal error, the server's process answering all the same.
func jsonRPCError(err error) bool {
	for _, e := range []error{mcp.ErrParseError, mcp.ErrInvalidRequest, mcp.ErrMethodNotFound, mcp.ErrInvalidParams,
		mcp.ErrInternalError, mcp.ErrRequestInterrupted, mcp.ErrResourceNotFound} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func byStatus(status int) breaker.Result {
	if status >= 500 || status == 408 || status == 429 {
		return breaker.Failed
	}
	return breaker.Answered
}

// statusRE finds the HTTP status in an MCP transport error ("request failed
// with status 502: …"): mcp-go reports it in text only.
var statusRE = regexp.MustCompile(`status (?:code: )?(\d{3})\b`)

func statusIn(msg string) (int, bool) {
	m := statusRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}
