package grants

import (
	"encoding/json"
	"sync"

	"github.com/guilds/guilds/internal/tools"
)

// shapeCache remembers shaped listed-tool schemas by their exact bytes:
// shaping compiles the schema, and a run start may offer thousands of tools
// whose schemas rarely change between listings.
type shapeCache struct {
	mu sync.RWMutex
	m  map[string]shaped
}

type shaped struct {
	out json.RawMessage
	err error
}

const shapeCacheMax = 20000

func (c *shapeCache) shape(schema json.RawMessage) (json.RawMessage, error) {
	c.mu.RLock()
	r, ok := c.m[string(schema)]
	c.mu.RUnlock()
	if ok {
		return r.out, r.err
	}
	out, _, err := tools.Shape(schema)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= shapeCacheMax {
		c.m = make(map[string]shaped)
	}
	c.m[string(schema)] = shaped{out, err}
	c.mu.Unlock()
	return out, err
}
