package client

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// connSlots is the client's bound on connections (Options.MaxConns), kept
// by the client rather than by the transport so that a background drain
// does not count against it. A request holds a slot from its send to the
// end of its measurement; the drain of the rest of its body, which only
// serves the connection's reuse, holds none. A server that keeps the
// connection open after the end marker would otherwise have the next
// request wait up to the drain's bound for a connection it need not share:
// here it dials a new one, and the drain goes on, so the server still sees
// the response read through rather than cut. Drains are bounded too: at
// most as many as slots, the oldest ended (its connection closed) when a
// new one would exceed them, so the connections stay below twice the
// bound. The same rule serves both transports: it asks nothing of them but
// the cancellation of a drain's context.
type connSlots struct {
	slots   chan struct{} // one per request holding a slot; nil without a bound
	waiters atomic.Int64  // requests waiting for a slot

	mu     sync.Mutex
	drains []*drainEntry // oldest first
}

// drainEntry is one background drain; cancel ends it.
type drainEntry struct{ cancel context.CancelCauseFunc }

func newConnSlots(maxConns int) *connSlots {
	s := &connSlots{}
	if maxConns > 0 {
		s.slots = make(chan struct{}, maxConns)
	}
	return s
}

// acquire takes a slot, waiting in arrival order while every slot is held,
// until ctx is done; it returns ctx's cause then.
func (s *connSlots) acquire(ctx context.Context) error {
	if s.slots == nil {
		return nil
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// waiting returns how many requests wait for a slot.
func (s *connSlots) waiting() int { return int(s.waiters.Load()) }

// release gives back a slot that acquire took.
func (s *connSlots) release() {
	if s.slots != nil {
		<-s.slots
	}
}

// drain registers a background drain that cancel ends, ending the oldest
// one when there would be more drains than slots. The returned function
// counts the drain out when it has ended.
func (s *connSlots) drain(cancel context.CancelCauseFunc) (ended func()) {
	if s.slots == nil {
		return func() {}
	}
	e := &drainEntry{cancel: cancel}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.drains) == cap(s.slots) {
		s.drains[0].cancel(causeDrain)
		s.drains = slices.Delete(s.drains, 0, 1)
	}
	s.drains = append(s.drains, e)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.Index(s.drains, e); i >= 0 {
			s.drains = slices.Delete(s.drains, i, i+1)
		}
	}
}
