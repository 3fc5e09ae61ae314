package tools

import (
	"context"
	"sync"
	"time"
)

// A handler that waits for a person (an answer in the operator's inbox) does
// not wait inside its call when the run can wait for it: it records a
// suspension and returns, and the run workflow calls it again, with the same
// arguments and seq, once the key is signalled or Until has passed. The wait
// then holds no worker (docs/adr/0514).

// Suspension is what a handler asked for.
type Suspension struct {
	Key   string    `json:"key"`   // the id the run is signalled with (an inbox request's id)
	Until time.Time `json:"until"` // call again at the latest then
}

type suspendKey struct{}

type waitOverKey struct{}

// WithWaitOver marks a call made again because its suspension's time came
// with no answer: the handler may not suspend again and must answer now.
func WithWaitOver(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitOverKey{}, true)
}

// WaitOver reports whether the run's wait for this call is over (see
// WithWaitOver). The run's clock decides, not the worker's: a handler that
// compared its own clock could suspend again, and again, on a worker whose
// clock is behind the run's.
func WaitOver(ctx context.Context) bool {
	over, _ := ctx.Value(waitOverKey{}).(bool)
	return over
}

type suspendSlot struct {
	mu sync.Mutex
	s  *Suspension
}

// WithSuspend returns a context in which a handler may suspend its call, and
// a function that returns the suspension it asked for (nil when none).
func WithSuspend(ctx context.Context) (context.Context, func() *Suspension) {
	slot := &suspendSlot{}
	return context.WithValue(ctx, suspendKey{}, slot), func() *Suspension {
		slot.mu.Lock()
		defer slot.mu.Unlock()
		return slot.s
	}
}

// Suspend asks the run to call the handler again later. It reports false
// where the caller cannot wait durably (a Test call, a benchmark): the
// handler must then answer by itself.
func Suspend(ctx context.Context, s Suspension) bool {
	slot, ok := ctx.Value(suspendKey{}).(*suspendSlot)
	if !ok {
		return false
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.s = &s
	return true
}

// CanSuspend reports whether Suspend would be heard: the call runs where
// the run can wait for it, and its wait is not over already.
func CanSuspend(ctx context.Context) bool {
	_, ok := ctx.Value(suspendKey{}).(*suspendSlot)
	return ok && !WaitOver(ctx)
}
