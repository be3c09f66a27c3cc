package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the
// transport is meant to start none of its own, so whatever is left is a
// server of a test not shut down or a connection nobody closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every test's network waits; tests finish in far less.
const testTimeout = 10 * time.Second

// testCtx is the context every request of a test runs under.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newTransport is New(opts) with the idle connections closed when the test
// ends.
func newTransport(t testing.TB, opts Options) *Transport {
	t.Helper()
	tr, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// newRequest builds a request under ctx; it fails the test on a bad URL.
func newRequest(t testing.TB, ctx context.Context, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatalf("NewRequest %s %s: %v", method, url, err)
	}
	return req
}

// roundTrip sends req and reads the whole body, closing it; it fails the
// test on any error.
func roundTrip(t testing.TB, tr *Transport, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip %s %s: %v", req.Method, req.URL, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the body of %s %s: %v", req.Method, req.URL, err)
	}
	return resp, string(b)
}

// connCounter counts the connections an httptest server accepted and how
// many were open at most at once.
type connCounter struct {
	mu            sync.Mutex
	total, active int
	maxActive     int
}

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.total++
		c.active++
		c.maxActive = max(c.maxActive, c.active)
	case http.StateClosed, http.StateHijacked:
		c.active--
	}
}

func (c *connCounter) counts() (total, active, maxActive int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.active, c.maxActive
}

// newCountingServer starts an httptest server for h that counts its
// connections.
func newCountingServer(t testing.TB, h http.Handler) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

// rawServer is a TCP server on loopback whose connections a test handles
// byte by byte, to misbehave in ways net/http's server will not.
type rawServer struct {
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	accepts int
	done    chan struct{} // closed when the test ends: handlers blocked on it return
}

// newRawServer serves every accepted connection with handle in a goroutine
// of its own; the test's end closes the listener and every connection and
// waits for the handlers.
func newRawServer(t testing.TB, handle func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{ln: ln, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.accepts++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() }

func (s *rawServer) acceptCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepts
}

// readHead reads one request head, through its blank line, and returns it
// as sent; it returns "" when the connection ends first.
func readHead(br *bufio.Reader) string {
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			return ""
		}
		if line == "\r\n" {
			return head.String()
		}
	}
}

// readRequest reads one request with net/http's parser and its whole body.
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(req.Body)
	return req, b, err
}

// okResponse is a complete keep-alive response with body "ok".
const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// poll calls cond until it holds or the test's deadline passes.
func poll(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// recv waits for a value on ch within the test's deadline.
func recv[T any](t testing.TB, ctx context.Context, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
		panic("unreachable")
	}
}

// traceLog records the httptrace hooks in the order they fire.
type traceLog struct {
	mu     sync.Mutex
	events []string
	reused []bool
	tls    []string // negotiated protocols seen by TLSHandshakeDone
}

func (l *traceLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *traceLog) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:      func(string) { l.add("GetConn") },
		ConnectStart: func(string, string) { l.add("ConnectStart") },
		ConnectDone:  func(string, string, error) { l.add("ConnectDone") },
		TLSHandshakeStart: func() {
			l.add("TLSHandshakeStart")
		},
		TLSHandshakeDone: func(s tls.ConnectionState, err error) {
			l.mu.Lock()
			l.tls = append(l.tls, s.NegotiatedProtocol)
			l.mu.Unlock()
			l.add("TLSHandshakeDone")
		},
		GotConn: func(i httptrace.GotConnInfo) {
			l.mu.Lock()
			l.reused = append(l.reused, i.Reused)
			l.mu.Unlock()
			l.add("GotConn")
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { l.add("WroteRequest") },
		GotFirstResponseByte: func() { l.add("GotFirstResponseByte") },
	}
}

// take returns the events so far and starts a new list.
func (l *traceLog) take() (events []string, reused []bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	events, reused = l.events, l.reused
	l.events, l.reused = nil, nil
	return events, reused
}

// withTrace is ctx with l's hooks.
func withTrace(ctx context.Context, l *traceLog) context.Context {
	return httptrace.WithClientTrace(ctx, l.trace())
}

// closeRecorder is a request body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	mu     sync.Mutex
	closed bool
}

func (c *closeRecorder) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *closeRecorder) wasClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func newCloseRecorder(b []byte) *closeRecorder { return &closeRecorder{Reader: bytes.NewReader(b)} }

// withTraceFunc is ctx with a trace that reports GotConn's Reused flag.
func withTraceFunc(ctx context.Context, gotConn func(reused bool)) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { gotConn(i.Reused) },
	})
}
