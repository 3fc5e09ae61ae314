package connectors

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// Transport returns an http.RoundTripper that sets the connection's
// credential headers (Authorization: Bearer …, X-API-KEY, … as the provider
// decides) on every request, resolved at call time. A resolve failure is the
// RoundTrip error, so callers see *ErrReconnectRequired and friends. base
// defaults to http.DefaultTransport. Use it as the client of mcp-go's
// streamable HTTP transport or of an adapter's REST calls.
func (r *Resolver) Transport(base http.RoundTripper, id uuid.UUID) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{r: r, id: id, base: base}
}

type authTransport struct {
	r    *Resolver
	id   uuid.UUID
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if LeftOriginalHost(req) {
		// A redirect to another host gets no credential: the login is the
		// server's, not whoever it points at.
		return t.base.RoundTrip(req)
	}
	inj, err := t.r.Injection(req.Context(), t.id)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // the RoundTripper contract: close the body even on error
		}
		return nil, err
	}
	out := req.Clone(req.Context())
	for k, v := range inj.Headers {
		out.Header.Set(k, v)
	}
	return t.base.RoundTrip(out)
}

// HeaderFunc returns a function with the shape of mcp-go's
// transport.HTTPHeaderFunc that yields the connection's headers. That shape
// has no error: on failure it returns no headers (the server answers 401);
// call Token first where the typed error matters, or prefer Transport. The
// returned map is shared and must not be modified.
func (r *Resolver) HeaderFunc(id uuid.UUID) func(context.Context) map[string]string {
	return func(ctx context.Context) map[string]string {
		inj, err := r.Injection(ctx, id)
		if err != nil {
			return nil
		}
		return inj.Headers
	}
}

// Meta returns the _meta fields carrying the connection's token for a stdio
// MCP server (key MetaTokenField unless the provider says otherwise). The map
// is shared and must not be modified; copy it into the request's meta.
func (r *Resolver) Meta(ctx context.Context, id uuid.UUID) (map[string]any, error) {
	inj, err := r.Injection(ctx, id)
	return inj.Meta, err
}

// Env returns the connection's environment for a stdio server process as
// sorted "NAME=value" entries (no-auth-with-config connections and providers
// that inject through the environment).
func (r *Resolver) Env(ctx context.Context, id uuid.UUID) ([]string, error) {
	inj, err := r.Injection(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(inj.Env))
	for k, v := range inj.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// LeftOriginalHost reports whether req is a redirect (http.Client sets
// req.Response while following one) whose host differs from the host of the
// request that started the chain.
func LeftOriginalHost(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	return first != req && !strings.EqualFold(first.URL.Host, req.URL.Host)
}
