// Package grantstest helps tests of grants and its callers: a native tool
// registry that implements every catalog name with a stub.
package grantstest

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/tools"
)

// Registry returns a tools registry holding a stub of every native catalog
// tool, with the class and listing its family registers it under, except
// those named in missing.
func Registry(missing ...string) *tools.Registry {
	skip := map[string]bool{}
	for _, m := range missing {
		skip[m] = true
	}
	quiet := slog.New(slog.DiscardHandler)
	reg := tools.NewRegistry(tools.WithLogger(quiet))
	for _, t := range native.Registry(nil, quiet).Listed() {
		if skip[t.Name] {
			continue
		}
		reg.Register(tools.Tool{
			Name: t.Name, Description: "stub of " + t.Name, Class: t.Class, Listing: t.Listing,
			Schema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","format":"uri"}},"additionalProperties":false}`),
			Handler: func(context.Context, tools.Call) (string, error) { return "ok", nil },
		})
	}
	return reg
}
