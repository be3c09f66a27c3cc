package client

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestQueueTimeWithForcedConnectionLimit proves the connection bound is never
// silent: with MaxConns 1 and two requests at once, the second one waits for
// the first one's connection, and that wait is in its QueueS (and inside its
// latencies, which run from the send time). The first request is held by the
// server until the second one waits for a connection, so the overlap does not
// depend on timing.
func TestQueueTimeWithForcedConnectionLimit(t *testing.T) {
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-s.stop:
			return
		}
		sseStart(w)
		event(w, "", textEvent("hi"))
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{MaxConns: 1})
	req := Request{Kind: results.KindChat, Model: "m", Prompt: "p", Modalities: []string{"text"}}

	first := make(chan *results.Record, 1)
	go func() {
		rec := &results.Record{}
		c.Do(context.Background(), req, rec)
		first <- rec
	}()
	<-arrived // the first request holds the only connection

	second := make(chan *results.Record, 1)
	go func() {
		rec := &results.Record{}
		c.Do(context.Background(), req, rec)
		second <- rec
	}()
	waitFor(t, "the second request to wait for a connection", func() bool { return c.slots.waiting() == 1 })
	close(release)

	r1, r2 := <-first, <-second
	for i, r := range []*results.Record{r1, r2} {
		if !r.OK() {
			t.Fatalf("request %d failed: %s: %s", i+1, r.ErrorClass, r.Error)
		}
	}
	if r2.QueueS <= 0 {
		t.Errorf("second request: queue time %v s, want > 0 (it waited for the only connection)", r2.QueueS)
	}
	if r2.QueueS > r2.FirstByteS || r2.QueueS > r2.E2ES {
		t.Errorf("queue time %v s is not inside the latencies (first byte %v s, e2e %v s)", r2.QueueS, r2.FirstByteS, r2.E2ES)
	}
	// The second request may get the first's connection back or, when the
	// first's drain still holds it (a drain holds no slot), a new one: at
	// most 2 x MaxConns connections, never more.
	if n := srv.conns.Load(); n < 1 || n > 2 {
		t.Errorf("server saw %d connections, want 1 or 2 (MaxConns 1, and a drain beside it)", n)
	}
}

// TestNoConnectionBoundByDefault: with MaxConns 0, connections follow the
// load: n requests at once reach the server at once, on n connections.
func TestNoConnectionBoundByDefault(t *testing.T) {
	const n = 4
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-s.stop:
			return
		}
		sseStart(w)
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{})
	req := Request{Kind: results.KindChat, Model: "m", Prompt: "p", Modalities: []string{"text"}}
	recs := make(chan *results.Record, n)
	for range n {
		go func() {
			rec := &results.Record{}
			c.Do(context.Background(), req, rec)
			recs <- rec
		}()
	}
	for range n {
		<-arrived // all n reached the server at once: none waited for another
	}
	close(release)
	for range n {
		if r := <-recs; !r.OK() {
			t.Errorf("request failed: %s: %s", r.ErrorClass, r.Error)
		}
	}
	if got := srv.conns.Load(); got != n {
		t.Errorf("server saw %d connections, want %d", got, n)
	}
}

// TestQueueFormula checks traceTimes.queue against hand-computed waits.
func TestQueueFormula(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		get, got, dialStart, dialEnd int64
		reused                       bool
		want                         time.Duration
	}{
		{name: "never asked", want: 0},
		{name: "idle connection", get: 100, got: 130, reused: true, want: 30},
		{name: "waited for a busy one", get: 100, got: 5_000_100, reused: true, want: 5_000_000},
		{name: "own dial only", get: 100, got: 1_100, dialStart: 150, dialEnd: 1_050, want: 100},
		{name: "waited, then dialled", get: 100, got: 9_100, dialStart: 8_000, dialEnd: 9_000, want: 8_000},
		{name: "dialled but handed another", get: 100, got: 600, dialStart: 150, dialEnd: 900, reused: true, want: 500},
		{name: "dial end after got", get: 100, got: 600, dialStart: 150, dialEnd: 900, want: 50},
	} {
		tt := &traceTimes{}
		tt.getConn.Store(tc.get)
		tt.gotConn.Store(tc.got)
		tt.dialStart.Store(tc.dialStart)
		tt.dialEnd.Store(tc.dialEnd)
		tt.reused.Store(tc.reused)
		if got := tt.queue(); got != tc.want {
			t.Errorf("%s: queue %v, want %v", tc.name, got, tc.want)
		}
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
