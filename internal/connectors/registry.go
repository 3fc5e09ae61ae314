package connectors

import (
	"fmt"
	"slices"
	"sync"
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
