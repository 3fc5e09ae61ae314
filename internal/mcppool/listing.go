package mcppool

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// StoreTools persists a listing through grants.SyncListedTools (mcp_tools
// rows and the default-off overlays of risky tools).
func StoreTools(ctx context.Context, db store.DB, connectionID string, tools []Tool) error {
	list := make([]grants.ListedTool, len(tools))
	for i, t := range tools {
		list[i] = grants.ListedTool{Name: t.RemoteName, Description: t.Description, Schema: t.Schema}
	}
	return grants.SyncListedTools(ctx, db, connectionID, list)
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
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	if hc == nil {
		hc = http.DefaultClient
	}
	var c *client.Client
	var err error
	switch info.Transport {
	case "http":
		c, err = client.NewStreamableHttpClient(info.URL, transport.WithHTTPBasicClient(hc), transport.WithHTTPHeaders(headers))
	case "sse":
		c, err = client.NewSSEMCPClient(info.URL, transport.WithHTTPClient(hc), transport.WithHeaders(headers))
	default:
		return nil, fmt.Errorf("%s: key validation needs an http or sse server", info.Slug)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := initialize(ctx, c); err != nil {
		if isUnauthorized(err) {
			return nil, ErrKeyRejected
		}
		return nil, err
	}
	tools, err := listAll(ctx, c, info.Slug)
	if isUnauthorized(err) {
		return nil, ErrKeyRejected
	}
	return tools, err
}

// ErrKeyRejected: the server refused the key (401).
var ErrKeyRejected = fmt.Errorf("the server rejected the key")
