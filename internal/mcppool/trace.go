package mcppool

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/telemetry"
)

// traced names on the request's span the session it goes on.
func traced(span *telemetry.MCPRequest, s *session) {
	var sid, version string
	if s.c != nil {
		sid, version = s.c.GetSessionId(), s.c.ProtocolVersion()
	}
	span.Session(s.info.Slug, s.info.Transport, sid, version)
}

// withTrace adds the W3C trace context of ctx's span to a request's _meta
// (traceparent, tracestate), beside what meta already holds.
func withTrace(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	tc := telemetry.TraceMeta(ctx)
	if len(tc) == 0 {
		return meta
	}
	out := &mcp.Meta{AdditionalFields: tc}
	if meta != nil { // a copy: the credential source may hand out a shared map
		out.ProgressToken = meta.ProgressToken
		for k, v := range meta.AdditionalFields {
			if _, taken := tc[k]; !taken {
				tc[k] = v
			}
		}
	}
	return out
}

// errorType is a failed request's error.type: a short class, never the
// message (a server's answer may be quoted there).
func errorType(err error) string {
	var timeout *TimeoutError
	var reconnect *connectors.ErrReconnectRequired
	switch {
	case err == nil:
		return ""
	case errors.As(err, &timeout):
		return "timeout"
	case errors.As(err, &reconnect):
		return "reconnect_required"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case isUnauthorized(err):
		return "unauthorized"
	}
	return "transport_error"
}
