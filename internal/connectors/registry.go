package connectors

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/guilds/guilds/internal/catalog"
)

var registry struct {
	sync.RWMutex
	m map[ProviderID]Provider
}

// Register makes a provider plugin available to engines. Call it from the
// plugin's init; a second provider with the same ID panics.
func Register(p Provider) {
	if p == nil || p.ID() == "" {
		panic("connectors: Register of a nil provider or one without an ID")
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.m == nil {
		registry.m = map[ProviderID]Provider{}
	}
	if _, dup := registry.m[p.ID()]; dup {
		panic(fmt.Sprintf("connectors: provider %q registered twice", p.ID()))
	}
	registry.m[p.ID()] = p
}

// Lookup returns a registered provider.
func Lookup(id ProviderID) (Provider, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.m[id]
	return p, ok
}

// Registered lists the registered provider IDs, sorted.
func Registered() []ProviderID {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]ProviderID, 0, len(registry.m))
	for id := range registry.m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// CatalogChecker is implemented by plugins that can vet a catalog row's
// config on its own (no environment, no network), so the catalog editor
// refuses a row the plugin would refuse at start-up.
type CatalogChecker interface {
	CheckCatalog(config json.RawMessage) error
}

// CheckCatalogConfig runs the CatalogChecker of the plugin a catalog row's
// config names ("provider"), if it is registered and has one.
func CheckCatalogConfig(config json.RawMessage) error {
	// Lenient: a type error elsewhere in the config is the plugin's to report.
	row, _ := catalog.ParseConfig(config)
	if row.Provider == "" {
		return nil
	}
	p, ok := Lookup(ProviderID(row.Provider))
	if !ok {
		return nil
	}
	if c, ok := p.(CatalogChecker); ok {
		return c.CheckCatalog(config)
	}
	return nil
}
