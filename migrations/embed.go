// Package migrations holds the numbered SQL migrations of the guilds schema.
// Files are named NNN_name.up.sql and NNN_name.down.sql and embedded in the binary.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
