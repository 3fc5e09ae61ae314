package mcppool

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// StoreTools persists a listing through grants.SyncListedTools (mcp_tools
// rows and the default-off overlays of risky tools).
func StoreTools(ctx context.Context, db store.DB, connectionID string, tools []Tool) error {
	return grants.SyncListedTools(ctx, db, connectionID, listedTools(tools))
}

// listedTools is a listing as grants stores it; never nil.
func listedTools(tools []Tool) []grants.ListedTool {
	list := make([]grants.ListedTool, len(tools))
	for i, t := range tools {
		list[i] = grants.ListedTool{Name: t.RemoteName, Description: t.Description, Schema: t.Schema, OutputSchema: t.OutputSchema,
			UIResource: t.UIResource}
	}
	return list
}

// Stored returns a connection's stored listing, by model-facing name.
func Stored(ctx context.Context, db store.DB, connectionID string) ([]Tool, error) {
	rows, err := db.Query(ctx, `SELECT remote_name, name, description, input_schema FROM mcp_tools
WHERE connection_id = $1 ORDER BY name`, connectionID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []Tool
	for rows.Next() {
		var t Tool
		if err := rows.Scan(&t.RemoteName, &t.Name, &t.Description, &t.Schema); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ListWith lists a server's tools with fixed headers and no stored login:
// key validation of token servers, before anything is stored. The key is
// only sent to the server; errors never contain it.
func ListWith(ctx context.Context, hc *http.Client, info ServerInfo, headers map[string]string) ([]Tool, error) {
	if info.Transport == "stdio" {
		return nil, fmt.Errorf("%s: key validation needs an http or sse server", info.Slug)
	}
	return ListInjected(ctx, hc, info, connectors.Injection{Headers: headers})
}

// ListInjected lists a server's tools with an injection that is not stored
// yet: the headers of an http or sse server, the environment of a stdio
// server the platform starts for the occasion (and stops). A 401 is
// ErrKeyRejected.
func ListInjected(ctx context.Context, hc *http.Client, info ServerInfo, inj connectors.Injection) ([]Tool, error) {
	bound := or(info.ListTimeout, ListTimeout)
	reached := &TimeoutError{Server: label(info.Slug), Op: "tools/list", After: bound}
	ctx, cancel := context.WithTimeoutCause(ctx, bound, reached)
	defer cancel()
	if hc == nil {
		hc = http.DefaultClient
	}
	dial := func(bool) (*client.Client, *probeWatch, error) { // a one-off listing needs no GET stream
		switch info.Transport {
		case "http":
			hc, watch := watchProbe(checkAnswers(hc, info.Slug))
			c, err := streamableClient(info, declining, transport.WithHTTPBasicClient(hc), transport.WithHTTPHeaders(inj.Headers))
			return c, watch, err
		case "sse":
			c, err := sseClient(info, declining, transport.WithHTTPClient(checkAnswers(hc, info.Slug)), transport.WithHeaders(inj.Headers))
			return c, nil, err
		case "stdio":
			if info.Command == "" {
				return nil, nil, fmt.Errorf("%s: a stdio server needs a command in its catalog config", info.Slug)
			}
			env := make([]string, 0, len(inj.Env))
			for k, v := range inj.Env {
				env = append(env, k+"="+v)
			}
			sort.Strings(env)
			c, err := stdioClient(info, declining, env)
			return c, nil, err
		}
		return nil, nil, fmt.Errorf("%s: unknown transport %q", info.Slug, info.Transport)
	}
	known := eraUnknown
	if info.Transport == "sse" {
		known = eraLegacy
	}
	c, _, err := connect(ctx, dial, known)
	if err != nil {
		return nil, oneOffError(ctx, info, reached, err, true)
	}
	defer func() { _ = c.Close() }()
	tools, err := listAll(ctx, c, info.Slug)
	if err != nil {
		return nil, oneOffError(ctx, info, reached, err, false)
	}
	return tools, nil
}

// oneOffError is a one-off listing's failure as the pool's own would read:
// a 401 is ErrKeyRejected, the bound reached a *TimeoutError, a peer that
// does not speak MCP a *PeerError.
func oneOffError(ctx context.Context, info ServerInfo, reached *TimeoutError, err error, opening bool) error {
	switch {
	case isUnauthorized(err):
		return ErrKeyRejected
	case context.Cause(ctx) == reached:
		return reached
	}
	return explain(info, err, opening)
}

// ErrKeyRejected: the server refused the key (401); the connect service's
// value, which the adapter host answers too.
var ErrKeyRejected = connections.ErrKeyRejected
