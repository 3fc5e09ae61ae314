package connections

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
)

// A server that needs no login (catalog.NeedsNoLogin) still gets a login
// row: connecting it lists its tools with no credential and marks the row
// connected, with its binding and listing, and nothing stored in the
// engine. Every rule written for logins (bindings, per-tool switches, Off
// mid-run, listing refresh, sessions closed with the row or its scope) then
// holds for it unchanged. See docs/adr/0616-servers-that-need-no-login.md.

// connectOpen connects a login of a server that needs no login.
func (s *Service) connectOpen(ctx context.Context, row connstore.Connection, srv grants.ServerRoute, actor string) (Outcome, error) {
	if s.Checker == nil {
		return Outcome{}, errors.New(srv.Slug + ": this caller cannot list a server's tools")
	}
	checked, err := s.Checker.CheckOpen(ctx, row)
	if err != nil {
		return Outcome{}, &ServerError{Server: srv.Slug, Err: err}
	}
	r, err := finish(ctx, s.deps(), row, Options{HintFrom: HintGiven, Listed: checked.Listed, Actor: actor})
	if err != nil {
		return Outcome{}, err
	}
	s.log().Info("mcp login: a server that needs no login was turned on", "connection", row.ID, "tools", r.Tools)
	fresh, err := LoadConnection(ctx, s.bounded(), row.ID.String())
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Connection: fresh, Tools: r.Tools}, nil
}
