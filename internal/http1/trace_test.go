package http1

import (
	"io"
	"net/http"
	"slices"
	"testing"
)

// TestTraceOrder checks the hooks the client's timing reads, in order, for
// a new connection and for a reused one.
func TestTraceOrder(t *testing.T) {
	srv, _ := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	var log traceLog

	roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.URL, nil))
	events, reused := log.take()
	want := []string{"GetConn", "ConnectStart", "ConnectDone", "GotConn", "WroteRequest", "GotFirstResponseByte"}
	if !slices.Equal(events, want) || !slices.Equal(reused, []bool{false}) {
		t.Errorf("new connection: events %v, reused %v; want %v, [false]", events, reused, want)
	}

	roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodPost, srv.URL, nil))
	events, reused = log.take()
	want = []string{"GetConn", "GotConn", "WroteRequest", "GotFirstResponseByte"}
	if !slices.Equal(events, want) || !slices.Equal(reused, []bool{true}) {
		t.Errorf("reused connection: events %v, reused %v; want %v, [true]", events, reused, want)
	}
}
