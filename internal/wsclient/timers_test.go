package wsclient

import (
	"context"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestNextReusesTimers checks that waiting for a message allocates no
// timers once a connection has its own (two per message before, the idle
// timer and the turn's deadline), and that the reused idle timer still
// fires when no message comes.
func TestNextReusesTimers(t *testing.T) {
	opts := &Options{IdleTimeout: time.Hour}
	cn := &conn{msgs: make(chan message, 1), opts: opts}
	ctx := context.Background()
	deadline := time.Now().Add(time.Hour)
	msg := message{data: []byte("x")}
	allocs := testing.AllocsPerRun(100, func() {
		cn.msgs <- msg
		if _, f := cn.next(ctx, deadline, 0); f != nil {
			t.Fatalf("a waiting message: %v", f)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message, want 0", allocs)
	}
	opts.IdleTimeout = time.Millisecond
	if _, f := cn.next(ctx, deadline, 1); f == nil || f.class != results.ErrIdleTimeout {
		t.Fatalf("no message: %v, want the idle timeout", f)
	}
}
