package http1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestSequentialRequestsReuseOneConnection(t *testing.T) {
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	var log traceLog
	for range 3 {
		roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.URL, nil))
	}
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, true, true}) {
		t.Errorf("GotConn Reused over three requests: %v; want [false true true]", reused)
	}
	if total, _, _ := cc.counts(); total != 1 {
		t.Errorf("server saw %d connections; want 1", total)
	}
	if open, waiting := tr.OpenConns(); open != 1 || waiting != 0 {
		t.Errorf("OpenConns = %d, %d; want 1 idle, 0 waiting", open, waiting)
	}
	tr.CloseIdleConnections()
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns after CloseIdleConnections = %d; want 0", open)
	}
}

// TestBodyClosedEarlyClosesConnection: a stream cut short cannot be reused,
// and Close must not read on to the end of an endless stream.
func TestBodyClosedEarlyClosesConnection(t *testing.T) {
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" {
			io.WriteString(w, "ok")
			return
		}
		for i := 0; i < 1e6; i++ { // endless for the test, bounded for safety
			if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			if r.Context().Err() != nil {
				return
			}
		}
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	var log traceLog

	resp, err := tr.RoundTrip(newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.URL+"/stream", nil))
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	if _, err := resp.Body.Read(make([]byte, 16)); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- resp.Body.Close() }()
	if err := recv(t, ctx, "Close of an endless stream", closed); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("Read after Close: no error")
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns after closing a cut stream = %d; want 0", open)
	}
	roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.URL+"/short", nil))
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, false}) {
		t.Errorf("GotConn Reused: %v; want [false false]", reused)
	}
	if total, _, _ := cc.counts(); total != 2 {
		t.Errorf("server saw %d connections; want 2", total)
	}
}

// TestNotReused covers the responses after which a connection must not
// carry another request.
func TestNotReused(t *testing.T) {
	cases := []struct {
		name   string
		answer string // the whole response to the first request on a connection
		hold   bool   // keep the connection open after answering
	}{
		{name: "Connection close", answer: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", hold: true},
		{name: "HTTP/1.0 without length", answer: "HTTP/1.0 200 OK\r\n\r\nok"},
		{name: "bytes after the body", answer: okResponse + "HTTP/1.1 200 OK\r\n", hold: true},
	}
	forEachScheme(t, func(t *testing.T, sc scheme) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
					if readHead(br) == "" {
						return
					}
					if _, err := io.WriteString(c, tc.answer); err != nil || !tc.hold {
						return
					}
					// A second request here would mean the connection was
					// reused: answer it so the test sees it through Reused.
					if readHead(br) != "" {
						io.WriteString(c, okResponse)
					}
				})
				ctx := testCtx(t)
				var log traceLog
				for range 2 {
					if _, got := roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.url(), nil)); got != "ok" {
						t.Fatalf("body %q; want ok", got)
					}
				}
				if _, reused := log.take(); !slices.Equal(reused, []bool{false, false}) {
					t.Errorf("GotConn Reused: %v; want [false false]", reused)
				}
				if n := srv.acceptCount(); n != 2 {
					t.Errorf("server accepted %d connections; want 2", n)
				}
			})
		}
	})
}

// TestUnsolicitedResponseNotTaken: a server that sends a second response
// nobody asked for right after the first, in a write (over TLS, a record)
// of its own, must not have it taken for the next request's answer: the
// connection is dropped and the next request gets a new one. The two writes
// are sent in one segment, so that over TLS the client's TLS layer reads
// both records from the socket with the first response.
func TestUnsolicitedResponseNotTaken(t *testing.T) {
	forEachScheme(t, testUnsolicitedResponseNotTaken)
}

func testUnsolicitedResponseNotTaken(t *testing.T, sc scheme) {
	const unsolicited = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbad"
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
		if readHead(br) == "" {
			return
		}
		b := batchOf(c)
		b.hold()
		io.WriteString(c, okResponse)
		io.WriteString(c, unsolicited)
		if b.send() != nil {
			return
		}
		for readHead(br) != "" {
			io.WriteString(c, okResponse)
		}
	})
	ctx := testCtx(t)
	var log traceLog
	for i := range 3 {
		if _, got := roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.url(), nil)); got != "ok" {
			t.Fatalf("request %d: body %q; want ok (the unsolicited response was taken for the answer)", i, got)
		}
	}
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, false, false}) {
		t.Errorf("GotConn Reused: %v; want [false false false]", reused)
	}
}

// TestNoBodyReusedWithoutRead: a response without a body (204) needs no
// read before Close to give its connection back.
func TestNoBodyReusedWithoutRead(t *testing.T) {
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	for range 2 {
		resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, srv.URL, nil))
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		resp.Body.Close()
	}
	if total, _, _ := cc.counts(); total != 1 {
		t.Errorf("server saw %d connections for two 204 responses closed unread; want 1", total)
	}
}

// heldServer holds every request in its handler until the test releases
// it by its X-Seq number, reporting each arrival.
type heldServer struct {
	arrived chan int
	release map[int]chan struct{}
}

func newHeldServer(t *testing.T, n int) (*heldServer, string, *connCounter) {
	h := &heldServer{arrived: make(chan int, n), release: make(map[int]chan struct{})}
	for i := range n {
		h.release[i] = make(chan struct{})
	}
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq, _ := strconv.Atoi(r.Header.Get("X-Seq"))
		h.arrived <- seq
		select {
		case <-h.release[seq]:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "answer %d", seq)
	}))
	return h, srv.URL, cc
}

func TestMaxConnsWaitersServedInOrder(t *testing.T) {
	const n, maxConns = 5, 2
	h, url, cc := newHeldServer(t, n)
	tr := newTransport(t, Options{MaxConns: maxConns})
	ctx := testCtx(t)

	type result struct {
		seq    int
		body   string
		reused bool
		err    error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			var reused bool
			req := newRequest(t, withTraceFunc(ctx, func(r bool) { reused = r }), http.MethodGet, url, nil)
			req.Header.Set("X-Seq", strconv.Itoa(i))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				results <- result{seq: i, err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{seq: i, body: string(b), reused: reused, err: err}
		}()
		// Start the next request only when this one is at the server or
		// waits, so the order is known.
		if i < maxConns {
			if seq := recv(t, ctx, "an arrival", h.arrived); seq != i {
				t.Fatalf("arrival %d is request %d", i, seq)
			}
			continue
		}
		poll(t, ctx, fmt.Sprintf("request %d to wait", i), func() bool {
			open, waiting := tr.OpenConns()
			return open == maxConns && waiting == i+1-maxConns
		})
	}
	// Releasing request i gives its connection to the oldest waiter,
	// i+maxConns.
	for i := range n {
		close(h.release[i])
		r := recv(t, ctx, "a result", results)
		if r.seq != i || r.err != nil || r.body != fmt.Sprintf("answer %d", i) {
			t.Fatalf("result %+v; want request %d answered", r, i)
		}
		if wantReused := i >= maxConns; r.reused != wantReused {
			t.Errorf("request %d: GotConn Reused %v; want %v", i, r.reused, wantReused)
		}
		if i+maxConns < n {
			if seq := recv(t, ctx, "an arrival", h.arrived); seq != i+maxConns {
				t.Fatalf("after request %d ended, request %d arrived; want %d", i, seq, i+maxConns)
			}
		}
		if _, _, most := cc.counts(); most > maxConns {
			t.Fatalf("server saw %d connections at once; MaxConns is %d", most, maxConns)
		}
	}
	if total, _, most := cc.counts(); total != maxConns || most != maxConns {
		t.Errorf("server saw %d connections, %d at most at once; want %d, %d (handed on, not redialled)", total, most, maxConns, maxConns)
	}
	if open, waiting := tr.OpenConns(); open != maxConns || waiting != 0 {
		t.Errorf("OpenConns = %d, %d; want %d idle, 0 waiting", open, waiting, maxConns)
	}
}

func TestWaiterCancelled(t *testing.T) {
	h, url, cc := newHeldServer(t, 2)
	tr := newTransport(t, Options{MaxConns: 1})
	ctx := testCtx(t)

	held := holdFirst(t, ctx, tr, h, url)

	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(newRequest(t, wctx, http.MethodGet, url, nil))
		waited <- err
	}()
	poll(t, ctx, "the second request to wait", func() bool { _, waiting := tr.OpenConns(); return waiting == 1 })
	cancel()
	err := recv(t, ctx, "the cancelled waiter", waited)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v; want an error wrapping context.Canceled", err)
	}
	if open, waiting := tr.OpenConns(); open != 1 || waiting != 0 {
		t.Errorf("OpenConns after the waiter gave up = %d, %d; want 1, 0", open, waiting)
	}

	close(h.release[0])
	if err := recv(t, ctx, "the first request", held); err != nil {
		t.Fatalf("first request: %v", err)
	}
	var reused bool
	req := newRequest(t, withTraceFunc(ctx, func(r bool) { reused = r }), http.MethodGet, url, nil)
	req.Header.Set("X-Seq", "1")
	close(h.release[1])
	if _, got := roundTrip(t, tr, req); got != "answer 1" || !reused {
		t.Errorf("third request: body %q, reused %v; want %q on the first connection", got, reused, "answer 1")
	}
	if total, _, _ := cc.counts(); total != 1 {
		t.Errorf("server saw %d connections; want 1", total)
	}
}

// TestWaiterTimesOut: a waiter whose deadline passes gets the deadline
// error and leaves no waiter behind.
func TestWaiterTimesOut(t *testing.T) {
	h, url, _ := newHeldServer(t, 1)
	tr := newTransport(t, Options{MaxConns: 1})
	ctx := testCtx(t)
	held := holdFirst(t, ctx, tr, h, url)
	wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err := tr.RoundTrip(newRequest(t, wctx, http.MethodGet, url, nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter past its deadline: %v; want context.DeadlineExceeded", err)
	}
	if open, waiting := tr.OpenConns(); open != 1 || waiting != 0 {
		t.Errorf("OpenConns = %d, %d; want 1, 0", open, waiting)
	}
	close(h.release[0])
	if err := recv(t, ctx, "the first request", held); err != nil {
		t.Fatalf("first request: %v", err)
	}
}

// TestWaiterGetsSlotOfClosedConnection: when the connection in use is
// closed instead of given back (its body cut short), the waiter gets its
// slot and dials a connection of its own.
func TestWaiterGetsSlotOfClosedConnection(t *testing.T) {
	h, url, cc := newHeldServer(t, 2)
	tr := newTransport(t, Options{MaxConns: 1})
	ctx := testCtx(t)
	close(h.release[0])
	req := newRequest(t, ctx, http.MethodGet, url, nil)
	req.Header.Set("X-Seq", "0")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	recv(t, ctx, "the first request", h.arrived)

	type result struct {
		body   string
		reused bool
		err    error
	}
	waited := make(chan result, 1)
	go func() {
		var reused bool
		req := newRequest(t, withTraceFunc(ctx, func(r bool) { reused = r }), http.MethodGet, url, nil)
		req.Header.Set("X-Seq", "1")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			waited <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		waited <- result{body: string(b), reused: reused, err: err}
	}()
	poll(t, ctx, "the second request to wait", func() bool { _, waiting := tr.OpenConns(); return waiting == 1 })
	resp.Body.Close() // unread: the connection is closed, its slot handed on
	recv(t, ctx, "the second request", h.arrived)
	close(h.release[1])
	r := recv(t, ctx, "the second request's result", waited)
	if r.err != nil || r.body != "answer 1" || r.reused {
		t.Fatalf("second request: %+v; want answer 1 on a new connection", r)
	}
	// Not the server's count at once: it learns of the first close only
	// after the client may have dialled the second connection.
	if total, _, _ := cc.counts(); total != 2 {
		t.Errorf("server saw %d connections; want 2", total)
	}
	if open, waiting := tr.OpenConns(); open != 1 || waiting != 0 {
		t.Errorf("OpenConns = %d, %d; want 1, 0", open, waiting)
	}
}

// TestPoolAccountingUnderCancellation cancels requests at every stage a
// connection can be in (waiting for one, just got one, reading the head,
// reading the body) while others run, and then checks that no slot leaked:
// nobody waits, only idle connections remain, and a request still gets
// through.
func TestPoolAccountingUnderCancellation(t *testing.T) {
	srv, _ := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "some body")
	}))
	const maxConns, workers, perWorker = 2, 8, 25
	tr := newTransport(t, Options{MaxConns: maxConns})
	ctx := testCtx(t)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range perWorker {
				rctx, cancel := context.WithCancel(ctx)
				trace := &httptrace.ClientTrace{}
				switch (w + i) % 5 {
				case 0:
					trace.GetConn = func(string) { cancel() }
				case 1:
					trace.GotConn = func(httptrace.GotConnInfo) { cancel() }
				case 2:
					trace.GotFirstResponseByte = func() { cancel() }
				}
				req, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodGet, srv.URL, nil)
				if err != nil {
					cancel()
					errs <- err
					return
				}
				resp, err := tr.RoundTrip(req)
				if err == nil {
					if (w+i)%5 == 3 {
						resp.Body.Read(make([]byte, 1))
						cancel()
					}
					io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				cancel()
				if err != nil && !errors.Is(err, context.Canceled) {
					errs <- fmt.Errorf("request %d of worker %d: %w", i, w, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := recv(t, ctx, "a worker", errs); err != nil {
			t.Fatal(err)
		}
	}
	if open, waiting := tr.OpenConns(); open > maxConns || waiting != 0 {
		t.Fatalf("OpenConns = %d, %d; want at most %d idle, none waiting", open, waiting, maxConns)
	}
	roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.URL, nil))
	tr.CloseIdleConnections()
	if open, waiting := tr.OpenConns(); open != 0 || waiting != 0 {
		t.Errorf("OpenConns after CloseIdleConnections = %d, %d; want 0, 0 (a slot leaked)", open, waiting)
	}
}

// holdFirst sends request 0 to a held server and waits until the server
// holds it: it has the connection. The channel gets the request's error
// once the test releases it and its body has been read.
func holdFirst(t *testing.T, ctx context.Context, tr *Transport, h *heldServer, url string) <-chan error {
	t.Helper()
	held := make(chan error, 1)
	go func() {
		req := newRequest(t, ctx, http.MethodGet, url, nil)
		req.Header.Set("X-Seq", "0")
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		held <- err
	}()
	recv(t, ctx, "the first request", h.arrived)
	return held
}
