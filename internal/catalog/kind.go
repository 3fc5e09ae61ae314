// Package catalog is the catalog row (mcp_servers) as typed values: its kind,
// its auth and its config, parsed in one place; and the seed catalog the
// binary embeds (Manifests) with its seeding (Seed).
package catalog

import "slices"

// Kind is how the platform reaches a catalog server.
type Kind string

// Catalog kinds.
const (
	// KindRemote is an MCP server reached over the network (or stdio).
	KindRemote Kind = "remote"
	// KindAdapter is a local adapter compiled into the binary (config.adapter).
	KindAdapter Kind = "adapter"
	// KindGitHub is the GitHub App connector.
	KindGitHub Kind = "github"
)

// Kinds lists every kind, in the order error messages name them.
var Kinds = []Kind{KindRemote, KindAdapter, KindGitHub}

// Valid reports whether k is one of the catalog kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }
