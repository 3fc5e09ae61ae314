package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed manifests.json
var manifestsJSON []byte

// Tool is a tool a server publishes in the catalog (mcp_catalog_tools).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Manifest is one server of the seed catalog embedded in the binary.
type Manifest struct {
	Slug        string          `json:"slug"`
	Name        string          `json:"name"`
	Kind        Kind            `json:"kind"`
	Transport   string          `json:"transport"`
	URL         string          `json:"url"`
	Auth        Auth            `json:"auth"`
	Description string          `json:"description"`
	Limitations string          `json:"limitations"`
	SetupHint   string          `json:"setup_hint"`
	Config      json.RawMessage `json:"config"`
	Tools       []Tool          `json:"tools"` // never nil
}

// PublishesListing: a seeded remote server whose manifest lists no tools
// (Notion, Drive, Sentry, OpenSea, Etherscan) publishes its tool copy from
// what a connected session lists.
func (m Manifest) PublishesListing() bool { return m.Kind == KindRemote && len(m.Tools) == 0 }

// Manifests returns the seed catalog embedded in the binary, in its order.
// The grants package checks each entry as it checks an admin's row.
func Manifests() ([]Manifest, error) {
	var doc struct {
		Servers []Manifest `json:"servers"`
	}
	if err := json.Unmarshal(manifestsJSON, &doc); err != nil {
		return nil, fmt.Errorf("catalog: manifests.json: %w", err)
	}
	for i := range doc.Servers {
		if doc.Servers[i].Tools == nil {
			doc.Servers[i].Tools = []Tool{}
		}
	}
	return doc.Servers, nil
}

var listingPublished = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	ms, err := Manifests()
	if err != nil {
		return out
	}
	for _, m := range ms {
		if m.PublishesListing() {
			out[m.Slug] = true
		}
	}
	return out
})

// PublishesListing reports whether the seeded server with a slug publishes
// its tool copy from listings (Manifest.PublishesListing).
func PublishesListing(slug string) bool { return listingPublished()[slug] }
