package main

import (
	"context"
	"encoding/json"
	"os"
	"runtime/debug"

	"github.com/guilds/guilds/internal/codegraph"
	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
)

// graphQuery is one query of the structural code graph.
type graphQuery func(ctx context.Context, env *codegraph.Env, args json.RawMessage) codegraph.Result

// init registers the graph-backed tools: a build with this file answers
// code_map, code_find, code_outline, code_callers and code_search mode
// symbols from internal/codegraph.
func init() {
	for name, q := range map[string]graphQuery{
		"code_map":     codegraph.Map,
		"code_find":    codegraph.Find,
		"code_outline": codegraph.Outline,
		"code_callers": codegraph.Callers,
	} {
		if _, dup := handlers[name]; dup {
			panic("guilds-code: two handlers for " + name)
		}
		handlers[name] = graphHandler(q)
	}
	symbolSearch = graphHandler(codegraph.Symbols)
}

func graphHandler(q graphQuery) handler {
	return func(ctx context.Context, env *codeops.Env, args json.RawMessage) codeproto.Response {
		collectLate()
		res := q(ctx, graphEnv(env), args)
		return codeproto.Response{Text: res.Text, Meta: res.Meta}
	}
}

// graphEnv gives the graph the workspace as the helper sees it, with the
// helper's own confinement (links followed inside the container) and its
// way of naming paths.
func graphEnv(env *codeops.Env) *codegraph.Env {
	cwd, _ := env.Cwd()
	return &codegraph.Env{
		Home:     env.Home,
		Cwd:      cwd,
		MaxBytes: env.MaxBytes(),
		Resolve: func(p string) (string, error) {
			fsPath, _, err := env.Resolve(p)
			return fsPath, err
		},
		Rel: env.Rel,
	}
}

// graphMemoryLimit bounds the helper's heap on a graph call.
const graphMemoryLimit = 192 << 20

// collectLate lets the garbage collector wait until the heap nears
// graphMemoryLimit: a query allocates a few tens of MiB and exits, so it
// then never collects; a first build collects as it fills up and stays
// under the limit. GOGC or GOMEMLIMIT in the environment win.
func collectLate() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(graphMemoryLimit)
	}
}
