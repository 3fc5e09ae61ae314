package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
)

// Registry holds the native tools of the process. Tools are registered once
// at start-up; lookups and calls are safe for concurrent use.
type Registry struct {
	log   *slog.Logger
	mu    sync.RWMutex
	tools map[string]*entry
	order []string // names in registration order
}

type entry struct {
	tool   Tool
	schema *Schema
	shaped json.RawMessage
}

// Option configures a Registry.
type Option func(*Registry)

// WithLogger sets the logger that receives handler failures and panics.
// Without it the registry logs to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(r *Registry) {
		if l != nil {
			r.log = l
		}
	}
}

// NewRegistry returns an empty registry.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{tools: map[string]*entry{}}
	for _, o := range opts {
		o(r)
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	return r
}

// Register adds t. It panics, as a programming error, when the name is empty,
// invalid or taken, the handler is nil, the class is unknown, the listing is
// incomplete, or the schema does not compile or cannot be offered to a model.
func (r *Registry) Register(t Tool) {
	if t.Name == "" {
		panic("tools: Register with an empty name")
	}
	if !ValidName(t.Name) {
		panic(fmt.Sprintf("tools: Register %q: a name is 1 to 64 of [a-zA-Z0-9_-]", t.Name))
	}
	if t.Handler == nil {
		panic(fmt.Sprintf("tools: Register %q with a nil handler", t.Name))
	}
	if t.Class == "" {
		t.Class = ClassDefault
	}
	if !t.Class.Valid() {
		panic(fmt.Sprintf("tools: Register %q with unknown class %q", t.Name, t.Class))
	}
	if err := t.Listing.check(); err != nil {
		panic(fmt.Sprintf("tools: Register %q: %v", t.Name, err))
	}
	s, err := CompileSchema(t.Schema)
	if err != nil {
		panic(fmt.Sprintf("tools: Register %q: %v", t.Name, err))
	}
	shaped, _, err := shapeCompiled(t.Schema)
	if err != nil {
		panic(fmt.Sprintf("tools: Register %q: %v", t.Name, err))
	}
	t.Schema = s.Raw() // the registry's own copy
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		panic(fmt.Sprintf("tools: Register %q twice", t.Name))
	}
	r.tools[t.Name] = &entry{tool: t, schema: s, shaped: shaped}
	r.order = append(r.order, t.Name)
}

// Listed returns the tools registered with a listing (the native catalog),
// in the order they were registered.
func (r *Registry) Listed() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Tool
	for _, n := range r.order {
		if t := r.tools[n].tool; t.Listing.Listed() {
			out = append(out, t)
		}
	}
	return out
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// All returns every registered tool, sorted by name.
func (r *Registry) All() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.tool)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Offers returns the named tools as a run offers them (shaped schema for the
// model, original schema and validator for the calls), in the order given.
// Names that are not registered are skipped. With no names it returns every
// tool, sorted by name.
func (r *Registry) Offers(names ...string) []Offer {
	if len(names) == 0 {
		for _, t := range r.All() {
			names = append(names, t.Name)
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Offer, 0, len(names))
	for _, n := range names {
		e, ok := r.tools[n]
		if !ok {
			continue
		}
		out = append(out, Offer{
			Name:        n,
			Description: e.tool.Description,
			Schema:      e.tool.Schema,
			Shaped:      e.shaped,
			Validator:   e.schema,
		})
	}
	return out
}

// Invoke runs one call of a native tool and returns its raw result, not yet
// stamped: the handler's string, or "ERROR: …" when the tool is unknown, the
// arguments break the schema once optional empty strings are dropped (every problem listed), the handler fails, or
// the handler panics. Failure detail (with the stack for a panic) goes to the
// registry's logger, never into the result.
func (r *Registry) Invoke(ctx context.Context, call Call) string {
	r.mu.RLock()
	e, ok := r.tools[call.Name]
	r.mu.RUnlock()
	if !ok {
		return RefuseUnknown(call.Name)
	}
	args, err := e.schema.Prepare(call.Args)
	if err != nil {
		return ErrorResult(err.Error())
	}
	call.Args = args
	out, err := r.run(ctx, e.tool, call)
	if err != nil {
		return ErrorResult(err.Error())
	}
	return out
}

// errPanicked is what the model is told when a handler panics.
var errPanicked = errors.New("the tool failed unexpectedly; the failure was logged for the operators")

func (r *Registry) run(ctx context.Context, t Tool, call Call) (out string, err error) {
	attrs := []any{
		slog.String("tool", t.Name),
		slog.String("run_id", call.RunID),
		slog.String("agent_id", call.AgentID),
	}
	red := logRedactor(ctx)
	defer func() {
		if p := recover(); p != nil {
			r.log.ErrorContext(ctx, "tool handler panicked", append(attrs,
				slog.String("panic", red.Redact(fmt.Sprint(p))), slog.String("stack", string(debug.Stack())))...)
			out, err = "", errPanicked
		}
	}()
	out, err = t.Handler(ctx, call)
	if err != nil {
		r.log.WarnContext(ctx, "tool handler failed", append(attrs, slog.String("error", red.Redact(err.Error())))...)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return "", errors.New("the tool timed out")
		}
		if err.Error() == "" {
			return "", errors.New("the tool failed")
		}
		return "", err
	}
	return out, nil
}
