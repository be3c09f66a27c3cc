package load

import "context"

// abortKey is the context key of WithAbort.
type abortKey struct{}

// WithAbort returns a context carrying abort: once abort is closed, Run
// cancels its running jobs at once instead of waiting out Config.Grace (the
// second Ctrl-C). The channel travels in the context because the commands
// that call Run (run, sweep, capacity, ab) reach it through several layers
// that already pass ctx.
func WithAbort(ctx context.Context, abort <-chan struct{}) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// abortOf is the abort channel of ctx (nil, never ready, when none).
func abortOf(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(abortKey{}).(<-chan struct{})
	return ch
}
