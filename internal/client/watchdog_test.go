package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestIdleWatchCancels checks the idle watch end to end: with no byte at
// all, its idle period (which began an hour ago and lasted a minute) is
// over, and the request's context is cancelled with the idle cause.
func TestIdleWatchCancels(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w := startIdleWatch(time.Now().Add(-time.Hour), time.Minute, cancel)
	defer w.stop()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), causeIdle) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// TestBodyWithoutIdleTimeout checks that a body read by a client without an
// idle timeout (the zero idleWatch) reads through and notes the end.
func TestBodyWithoutIdleTimeout(t *testing.T) {
	b := body{r: strings.NewReader("x")}
	got, err := io.ReadAll(&b)
	if err != nil || string(got) != "x" || !b.eof {
		t.Fatalf("read %q, %v, eof %v", got, err, b.eof)
	}
	b.idle.stop()
}
