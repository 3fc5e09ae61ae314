package main

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
)

// The tools served by codeops; graph.go adds the graph-backed ones.
func init() {
	for name, h := range map[string]handler{
		"shell":        codeops.Shell,
		"shell_status": codeops.ShellStatus,
		"file_read":    codeops.FileRead,
		"file_edit":    codeops.FileEdit,
		"file_write":   codeops.FileWrite,
		"code_match":   codeops.CodeMatch,
		"code_search": func(ctx context.Context, env *codeops.Env, args json.RawMessage) codeproto.Response {
			return codeops.CodeSearch(ctx, env, args, symbolSearch)
		},
	} {
		register(name, h)
	}
}

// register adds a tool's handler; a name registered twice is a build bug.
func register(name string, h handler) {
	if _, dup := handlers[name]; dup {
		panic("guilds-code: tool " + name + " registered twice")
	}
	handlers[name] = h
}
