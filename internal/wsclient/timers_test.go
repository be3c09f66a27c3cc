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
	wake := make(chan time.Time) // a paced sender's wait: the path that arms the timers
	allocs := testing.AllocsPerRun(100, func() {
		cn.msgs <- msg
		if _, _, f := cn.nextOrWake(ctx, deadline, 0, wake); f != nil {
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

// TestNextTakesWaitingMessage checks that a message already waiting is
// taken without arming either timer (a reset and a stop of each, and a
// select over five channels, per message before), and that a wait with a
// wake channel (a paced sender) still takes the full path.
func TestNextTakesWaitingMessage(t *testing.T) {
	cn := &conn{msgs: make(chan message, 1), opts: &Options{IdleTimeout: time.Hour}}
	ctx := context.Background()
	cn.msgs <- message{data: []byte("x")}
	if m, f := cn.next(ctx, time.Now().Add(time.Hour), 0); f != nil || string(m.data) != "x" {
		t.Fatalf("a waiting message: %q, %v", m.data, f)
	}
	if cn.idleTimer != nil || cn.turnTimer != nil {
		t.Error("the timers were armed for a message that was waiting")
	}
	cn.msgs <- message{data: []byte("y")}
	wake := make(chan time.Time)
	if m, woke, f := cn.nextOrWake(ctx, time.Time{}, 1, wake); f != nil || woke || string(m.data) != "y" {
		t.Fatalf("a waiting message with a wake channel: %q, woke %v, %v", m.data, woke, f)
	}
	if cn.idleTimer == nil {
		t.Error("a paced sender's wait did not arm the idle timer")
	}
}
