package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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
// byte by byte, to misbehave in ways net/http's server will not; over TLS
// when its scheme is https.
type rawServer struct {
	ln      net.Listener
	scheme  scheme
	roots   *x509.CertPool // trusts the server's certificate (https)
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	accepts int
	done    chan struct{} // closed when the test ends: handlers blocked on it return
}

// scheme is how a test server speaks: plain TCP (http) or TLS (https).
type scheme string

const (
	schemeHTTP  scheme = "http"
	schemeHTTPS scheme = "https"
)

// forEachScheme runs test as a subtest over plain TCP and over TLS: the
// transport must meet a misbehaving server the same way on both.
func forEachScheme(t *testing.T, test func(t *testing.T, sc scheme)) {
	for _, sc := range []scheme{schemeHTTP, schemeHTTPS} {
		t.Run(string(sc), func(t *testing.T) { test(t, sc) })
	}
}

// testCert is the certificate of httptest's TLS servers, and a pool that
// trusts it.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv.TLS.Certificates[0], pool
}

// newRawServer serves every accepted connection with handle in a goroutine
// of its own over plain TCP (newRawServerOver).
func newRawServer(t testing.TB, handle func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	return newRawServerOver(t, schemeHTTP, handle)
}

// newRawServerOver serves every accepted connection with handle in a
// goroutine of its own, over TLS for https; the test's end closes the
// listener and every connection and waits for the handlers. Every
// connection's bytes go through a batchConn (batchOf), under the TLS layer
// when there is one.
func newRawServerOver(t testing.TB, sc scheme, handle func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{ln: ln, scheme: sc, done: make(chan struct{})}
	var cert tls.Certificate
	if sc == schemeHTTPS {
		cert, s.roots = testCert(t)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			var c net.Conn = &batchConn{Conn: raw}
			if sc == schemeHTTPS {
				c = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
			}
			s.mu.Lock()
			s.conns = append(s.conns, raw)
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

func (s *rawServer) url() string { return string(s.scheme) + "://" + s.ln.Addr().String() }

// batchConn is a server connection that can gather writes and send them in
// one: hold starts gathering, send writes what was gathered at once. Under
// TLS, two records sent together arrive in one segment, and the client's
// TLS layer reads both from the socket at once.
type batchConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	held    []byte
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holding {
		b.held = append(b.held, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

func (b *batchConn) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = true
}

func (b *batchConn) send() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = false
	_, err := b.Conn.Write(b.held)
	b.held = nil
	return err
}

// batchOf is the batchConn under a connection of a rawServer.
func batchOf(c net.Conn) *batchConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	return c.(*batchConn)
}

// transport is a new transport with opts that trusts the server's
// certificate.
func (s *rawServer) transport(t testing.TB, opts Options) *Transport {
	t.Helper()
	if s.roots != nil {
		opts.TLSConfig = &tls.Config{RootCAs: s.roots}
	}
	return newTransport(t, opts)
}

// schemeServer is a rawServer speaking sc, and a transport with opts to
// reach it.
func schemeServer(t *testing.T, sc scheme, opts Options, handle func(c net.Conn, br *bufio.Reader)) (*rawServer, *Transport) {
	t.Helper()
	s := newRawServerOver(t, sc, handle)
	return s, s.transport(t, opts)
}

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
