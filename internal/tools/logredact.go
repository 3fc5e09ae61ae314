package tools

import "context"

type logRedactorKey struct{}

// WithLogRedactor attaches the run's redactor to a call's context, so the
// failure detail the registry logs (a handler's error, a panic value) is
// redacted like the result: a remote API that echoes a key into its error text
// must not put it in the logs.
func WithLogRedactor(ctx context.Context, r *Redactor) context.Context {
	if r == nil {
		return ctx
	}
	return context.WithValue(ctx, logRedactorKey{}, r)
}

// logRedactor is the context's redactor, or nil (which redacts nothing).
func logRedactor(ctx context.Context) *Redactor {
	r, _ := ctx.Value(logRedactorKey{}).(*Redactor)
	return r
}
