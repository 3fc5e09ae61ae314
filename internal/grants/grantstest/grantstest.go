// Package grantstest helps tests of grants and its callers: a native tool
// registry that implements every catalog name with a stub.
package grantstest

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/tools"
)

// Registry returns a tools registry holding a stub of every native catalog
// tool except those named in missing.
func Registry(missing ...string) *tools.Registry {
	skip := map[string]bool{}
	for _, m := range missing {
		skip[m] = true
	}
	reg := tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler)))
	for _, n := range grants.NativeCatalog() {
		if skip[n.Name] {
			continue
		}
		reg.Register(tools.Tool{
			Name: n.Name, Description: "stub of " + n.Name, Class: n.Class,
			Schema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","format":"uri"}},"additionalProperties":false}`),
			Handler: func(context.Context, tools.Call) (string, error) { return "ok", nil },
		})
	}
	return reg
}
