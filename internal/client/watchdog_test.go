package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWatchdogCheck drives the watchdog's decision directly, with times an
// hour apart so that scheduling delays cannot change the outcome.
func TestWatchdogCheck(t *testing.T) {
	newDog := func() (*watchdog, context.Context) {
		ctx, cancel := context.WithCancelCause(context.Background())
		t.Cleanup(func() { cancel(nil) })
		w := &watchdog{base: time.Now().Add(-2 * time.Hour), idle: time.Hour, cancel: cancel}
		w.timer = time.AfterFunc(time.Hour, func() {})
		t.Cleanup(func() { w.timer.Stop() })
		return w, ctx
	}

	w, ctx := newDog()
	w.last.Store(int64(90 * time.Minute)) // last byte 30 minutes ago
	w.check()
	if ctx.Err() != nil {
		t.Fatal("cancelled although a byte arrived within the idle time")
	}

	w, ctx = newDog()
	w.last.Store(int64(30 * time.Minute)) // last byte 90 minutes ago
	w.check()
	if !errors.Is(context.Cause(ctx), causeIdle) {
		t.Fatalf("cause %v, want the idle timeout", context.Cause(ctx))
	}

	w, ctx = newDog()
	w.stop()
	w.check()
	if ctx.Err() != nil {
		t.Fatal("a stopped watchdog cancelled the request")
	}
}

// TestWatchdogFires checks the timer path end to end: with no reads at all
// the request context is cancelled with the idle cause.
func TestWatchdogFires(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w := startWatchdog(time.Now(), time.Millisecond, cancel)
	defer w.stop()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), causeIdle) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}
