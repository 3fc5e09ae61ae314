package mcppool

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/store"
)

// NotMCPError: the connection's server is a local adapter, which
// internal/adapters/host serves; the pool opens no session for it.
type NotMCPError struct{ Server string }

func (e *NotMCPError) Error() string {
	return e.Server + " is served by a local adapter, not an MCP server"
}

// info is the connection's catalog row as the pool needs it (row: kept in
// memory while the pool hears of changes). A deleted login is gone (every
// replica closes its session), and an adapter's is not the pool's.
func (p *Pool) info(ctx context.Context, connectionID string) (ServerInfo, error) {
	info, err := p.row(ctx, connectionID)
	if id, perr := uuid.Parse(connectionID); perr == nil && errors.Is(err, store.ErrNotFound) {
		return info, p.gone(id)
	}
	if err != nil {
		return info, err
	}
	if info.Kind == catalog.KindAdapter {
		return info, &NotMCPError{Server: info.Slug}
	}
	return info, nil
}

// Probe asks an MCP server whether the connection's stored login still
// works (a tools/list on its session) and answers a line to show the
// operator ("" when the row names no server to ask).
func (p *Pool) Probe(ctx context.Context, connectionID string) (string, error) {
	info, err := p.info(ctx, connectionID)
	if err != nil {
		return "", err
	}
	if info.URL == "" && info.Command == "" {
		return "", nil // no server to ask
	}
	tools, err := p.List(ctx, connectionID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d tools listed", len(tools)), nil
}
