//go:build tools

// Package temporalserver pins Temporal's own server and its SQL schema tool,
// the production shape that make prod-shape runs on PostgreSQL. It is a module
// of its own so the server's dependency tree stays out of the main go.mod, and
// it pins the same server version the CLI's dev server embeds.
package temporalserver

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
