// Package adapters holds the local adapters: services the platform reaches
// through their own REST APIs (CoinGecko, DexPaprika, …) while they appear in
// the catalog, the Tools view and a run's offer like remote MCP servers. A
// catalog row of kind "adapter" names its adapter in config.adapter; the
// adapter host (internal/adapters/host) serves that login's Connect check
// and tool calls, where a remote server's go to an MCP session. Each adapter is its own
// package that registers itself; the binary imports the ones it ships.
package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/connectors"
)

// Conn is what one call of an adapter works with. Cred holds the login's
// stored values (the key in AccessToken, other fields in Extra); it never
// leaves the adapter except on the request that needs it.
type Conn struct {
	HTTP    *http.Client // the platform's outbound client (policy-checked dials)
	BaseURL string       // the catalog row's URL
	Cred    connectors.Credential
	// Settings are what the operator chose for the login after it was made
	// (Drive's folder): stored on the connection, not secret, given only to
	// an adapter that implements SettingsUser.
	Settings map[string]string
}

// SettingsUser is an adapter whose calls read the login's Settings.
type SettingsUser interface {
	UsesSettings() bool
}

// Adapter is one local adapter.
type Adapter interface {
	Name() string
	// Check validates a login against the service, as Connect does before
	// storing it: ErrRejected when the service refuses the key, any other
	// error when it could not be asked. It returns a display hint (never a
	// secret), or "".
	Check(ctx context.Context, c Conn) (hint string, err error)
	// Call runs one of the adapter's tools with arguments already validated
	// against the tool's schema. Its result (and an error's message) goes
	// through the result pipeline like any tool result.
	Call(ctx context.Context, c Conn, tool string, args json.RawMessage) (string, error)
}

// MaxToolTimeout is the longest one adapter call may take when its tool asks
// for more than the default (ToolTimeouts); the run workflow's adapter class
// is sized on it, and the adapter host caps an answer at it (host.MaxTimeout).
const MaxToolTimeout = 90 * time.Second

// ToolTimeouts is an adapter some of whose tools take longer than the host's
// default bound on one call (Qonto's upload_invoice waits up to a minute for
// the service's processing). Timeout answers 0 for a tool that takes the
// default; the host caps an answer at MaxToolTimeout.
type ToolTimeouts interface {
	Timeout(tool string) time.Duration
}

// CallTimeout is how long one call of a tool may take: the adapter's own
// timeout for it, at most ceiling; def when it names none.
func CallTimeout(a Adapter, tool string, def, ceiling time.Duration) time.Duration {
	tt, ok := a.(ToolTimeouts)
	if !ok {
		return def
	}
	d := tt.Timeout(tool)
	if d <= 0 {
		return def
	}
	return min(d, ceiling)
}

// ErrChoiceNeeded: the login's credential works but the operator has still
// to choose what it may reach (Drive's folder); the login stays pending and
// is connected once the choice is stored.
var ErrChoiceNeeded = errors.New("the login needs the operator's choice before it is connected")

// ErrRejected: the service refused the login's key.
var ErrRejected = errors.New("the service refused the key")

var registry struct {
	sync.RWMutex
	m map[string]Adapter
}

// Register makes an adapter available; call it from the adapter's init. A
// second adapter with the same name panics.
func Register(a Adapter) {
	registry.Lock()
	defer registry.Unlock()
	if registry.m == nil {
		registry.m = map[string]Adapter{}
	}
	if _, dup := registry.m[a.Name()]; dup {
		panic(fmt.Sprintf("adapters: %q registered twice", a.Name()))
	}
	registry.m[a.Name()] = a
}

// Lookup returns a registered adapter.
func Lookup(name string) (Adapter, bool) {
	registry.RLock()
	defer registry.RUnlock()
	a, ok := registry.m[name]
	return a, ok
}

// Registered lists the registered adapters' names, sorted.
func Registered() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.m))
	for n := range registry.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ErrNotBuiltIn is returned for a catalog row naming an adapter this binary
// does not include.
type ErrNotBuiltIn struct{ Name string }

func (e *ErrNotBuiltIn) Error() string {
	return fmt.Sprintf("the %q adapter is not built into this platform yet", e.Name)
}

// Get is Lookup with the error a caller shows.
func Get(name string) (Adapter, error) {
	if a, ok := Lookup(name); ok {
		return a, nil
	}
	return nil, &ErrNotBuiltIn{Name: name}
}
