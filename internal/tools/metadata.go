package tools

import (
	"context"
	"sync"
)

// A handler returns only its result string; what a call should record beside
// it (an exit code, a path, a content hash) it sets on the call's metadata.

type metadataKey struct{}

type callMetadata struct {
	mu sync.Mutex
	m  map[string]any
}

// WithMetadata returns a context in which handlers can record metadata about
// one call, and a function that returns what they recorded (nil when nothing).
func WithMetadata(ctx context.Context) (context.Context, func() map[string]any) {
	cm := &callMetadata{}
	return context.WithValue(ctx, metadataKey{}, cm), func() map[string]any {
		cm.mu.Lock()
		defer cm.mu.Unlock()
		if len(cm.m) == 0 {
			return nil
		}
		out := make(map[string]any, len(cm.m))
		for k, v := range cm.m {
			out[k] = v
		}
		return out
	}
}

// SetMetadata records one field of the current call's metadata. It does
// nothing outside WithMetadata. The run stores metadata after redacting it, but
// a handler should still record ids, counts and codes rather than content.
func SetMetadata(ctx context.Context, key string, value any) {
	cm, ok := ctx.Value(metadataKey{}).(*callMetadata)
	if !ok {
		return
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.m == nil {
		cm.m = map[string]any{}
	}
	cm.m[key] = value
}
