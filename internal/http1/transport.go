// Package http1 is omnibench's HTTP/1.1 client transport: an
// http.RoundTripper built for thousands of long streaming responses at
// once, one per connection.
//
// net/http's Transport gives every connection two goroutines of its own, a
// reader that also watches the connection while it is idle and a writer,
// besides the caller's, plus a buffered writer and a channel handoff per
// request. With one stream per connection those are 16 KB of stacks per
// open stream and, in omnibench's client benchmark, a tenth of the whole
// process's CPU. Here the caller's goroutine does everything: it takes or
// dials a connection, writes the request in one write, reads the response
// head with http.ReadResponse (so the response is parsed by net/http's own
// code, chunked bodies included) and reads the body from the connection's
// one read buffer. A connection goes back to the pool when its body was read
// to the end and closed, and is closed otherwise.
//
// What a benchmark client needs of net/http's Transport is kept: a bound on
// connections with waiting requests served in order, idle connections
// reused last-in first-out and checked before reuse (for bytes nobody asked
// for or the server's close, on the socket and, over TLS, in records the
// TLS layer read ahead), TLS (HTTP/1.1 only, by ALPN), http:// proxies (a
// CONNECT tunnel for https), the httptrace hooks the client's timing uses,
// cancellation through the request's context, a cap on the response head
// (informational responses included), and the response a server sent
// before it read the whole request body (a 413), read when writing the
// body fails. What is left out, on purpose:
// HTTP/2, transparent compression, cookies, redirects (a RoundTripper does
// not follow them), request bodies of unknown length, and retries, except
// net/http's one: a request whose reused connection fails before any byte
// of a response came is sent once more on a new connection when nothing of
// it was written, or when it is idempotent (GET, HEAD, OPTIONS, TRACE, or an
// Idempotency-Key header field). A POST the server may have read is never
// sent twice; the check before reuse is what keeps a POST off a connection
// the server closed while it was idle.
package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Options configures a Transport; the zero value of each field has a
// usable default.
type Options struct {
	// MaxConns bounds the connections to one server (idle, in use and being
	// dialled); 0 means no bound. A request that finds the bound reached
	// waits, in arrival order, for a connection to come back or to close.
	MaxConns int
	// DialTimeout bounds a TCP connect (default 10 s); KeepAlive is the TCP
	// keep-alive period (default 30 s).
	DialTimeout, KeepAlive time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake (default 10 s).
	TLSHandshakeTimeout time.Duration
	// TLSConfig is used for https (cloned; ServerName defaults to the host,
	// NextProtos is set to http/1.1). nil means the defaults.
	TLSConfig *tls.Config
	// IdleConnTimeout is how long an idle connection is kept for reuse
	// (default 90 s): an older one is closed when it would be taken.
	IdleConnTimeout time.Duration
	// ReadBufferSize is the size of each connection's read buffer (default
	// 8 KiB). A body read into a larger slice bypasses it.
	ReadBufferSize int
	// MaxResponseHeaderBytes caps the bytes read for a response head (the
	// status line and header fields, of every informational response too);
	// default 1 MiB. The count is of bytes read from the connection, so it
	// may include up to ReadBufferSize bytes of the body read ahead.
	MaxResponseHeaderBytes int
	// Proxy returns the proxy for a request, nil for none (for example
	// http.ProxyFromEnvironment). Only http:// proxies are supported.
	Proxy func(*http.Request) (*url.URL, error)
	// UserAgent is sent when a request has no User-Agent header field
	// (default "omnibench").
	UserAgent string
}

// Transport is an HTTP/1.1 http.RoundTripper; it is safe for concurrent
// use. The zero value is not usable: call New.
type Transport struct {
	opts      Options
	dialer    net.Dialer
	writeBufs sync.Pool // *[]byte: request heads (and small bodies) are written from these

	mu    sync.Mutex
	pools map[connKey]*pool
}

// Defaults of Options.
const (
	defaultDialTimeout         = 10 * time.Second
	defaultKeepAlive           = 30 * time.Second
	defaultTLSHandshakeTimeout = 10 * time.Second
	defaultIdleConnTimeout     = 90 * time.Second
	defaultReadBufferSize      = 8 << 10
	defaultMaxHeaderBytes      = 1 << 20
	defaultUserAgent           = "omnibench"

	// inlineBody is the largest body copied into the write buffer so that
	// head and body go out in one write; a larger one is written on its own.
	inlineBody = 16 << 10
	// maxPooledWriteBuf keeps a buffer that grew beyond it out of the pool.
	maxPooledWriteBuf = 64 << 10
)

// New returns a Transport with opts, their zero fields set to the
// defaults. It fails on negative values.
func New(opts Options) (*Transport, error) {
	if opts.MaxConns < 0 || opts.DialTimeout < 0 || opts.KeepAlive < 0 || opts.TLSHandshakeTimeout < 0 ||
		opts.IdleConnTimeout < 0 || opts.ReadBufferSize < 0 || opts.MaxResponseHeaderBytes < 0 {
		return nil, fmt.Errorf("http1: negative option in %+v", redactedOptions(opts))
	}
	opts.DialTimeout = orDefault(opts.DialTimeout, defaultDialTimeout)
	opts.KeepAlive = orDefault(opts.KeepAlive, defaultKeepAlive)
	opts.TLSHandshakeTimeout = orDefault(opts.TLSHandshakeTimeout, defaultTLSHandshakeTimeout)
	opts.IdleConnTimeout = orDefault(opts.IdleConnTimeout, defaultIdleConnTimeout)
	opts.ReadBufferSize = orDefault(opts.ReadBufferSize, defaultReadBufferSize)
	opts.MaxResponseHeaderBytes = orDefault(opts.MaxResponseHeaderBytes, defaultMaxHeaderBytes)
	if opts.UserAgent == "" {
		opts.UserAgent = defaultUserAgent
	}
	t := &Transport{
		opts:   opts,
		dialer: net.Dialer{Timeout: opts.DialTimeout, KeepAlive: opts.KeepAlive},
		pools:  make(map[connKey]*pool),
	}
	t.writeBufs.New = func() any { b := make([]byte, 0, 1<<10); return &b }
	return t, nil
}

// redactedOptions is opts without the TLS configuration, which may hold
// keys, for an error message.
func redactedOptions(opts Options) Options {
	opts.TLSConfig, opts.Proxy = nil, nil
	return opts
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// connKey names the connections a request may use: its scheme and address,
// and the proxy it goes through.
type connKey struct {
	scheme string // "http" or "https"
	addr   string // host:port of the server
	proxy  string // host:port of the http:// proxy; "" when direct
	auth   string // the proxy's Proxy-Authorization value; "" for none
}

// pool holds one key's connections. Every field is guarded by
// Transport.mu.
type pool struct {
	key  connKey
	idle []*conn // most recently used last
	open int     // connections that exist or are being dialled
	// waiters are the requests waiting for a connection, oldest first. A
	// waiter is handed either a connection or nil: a slot to dial with.
	waiters []chan *conn
}

// conn is one connection and its read buffer.
type conn struct {
	pool      *pool
	nc        net.Conn // the TCP connection, or the TLS connection over it
	raw       net.Conn // the TCP connection, for the idle check
	in        headLimit
	br        *bufio.Reader
	idleSince time.Time
}

// headLimit is what a connection's read buffer reads from: the connection,
// with a byte budget while a response head is being read.
type headLimit struct {
	nc      net.Conn
	limited bool
	left    int
	max     int
}

func (h *headLimit) Read(p []byte) (int, error) {
	if !h.limited {
		return h.nc.Read(p)
	}
	if h.left <= 0 {
		return 0, &HeaderTooLargeError{Limit: h.max}
	}
	if len(p) > h.left {
		p = p[:h.left]
	}
	n, err := h.nc.Read(p)
	h.left -= n
	return n, err
}

// HeaderTooLargeError is returned when a response head is larger than
// Options.MaxResponseHeaderBytes.
type HeaderTooLargeError struct{ Limit int }

func (e *HeaderTooLargeError) Error() string {
	return fmt.Sprintf("http1: the response head is larger than %d bytes", e.Limit)
}

// RoundTrip sends req on a connection of its own and returns the response
// once its head has been read. The body reads from the connection; closing
// it returns the connection to the pool when the body was read to its end,
// and closes the connection otherwise. Cancelling req's context closes the
// connection, which ends a blocked read. Unlike net/http's, the body's Read
// and Close must not be called at the same time from two goroutines: to
// abort a read, cancel the context.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	// A RoundTripper closes the request body, on success too; the body has
	// been written in full by now.
	if req.Body != nil {
		req.Body.Close()
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key, err := t.keyFor(req)
	if err != nil {
		return nil, err
	}
	bufp := t.writeBufs.Get().(*[]byte)
	defer t.putWriteBuf(bufp)
	head, bigBody, err := t.appendRequest((*bufp)[:0], req, key)
	*bufp = head
	if err != nil {
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.get(ctx, key, trace, attempt > 0)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req, head, bigBody, trace)
		if err == nil {
			return resp, nil
		}
		var retry *retryable
		if attempt == 0 && reused && errors.As(err, &retry) && (!retry.written || idempotent(req)) &&
			ctx.Err() == nil && (bigBody == nil || req.GetBody != nil) {
			if bigBody != nil {
				rewound, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("http1: rewinding the request body for a new connection: %w", err)
				}
				defer rewound.Close() // as RoundTrip closes req.Body
				bigBody = rewound
			}
			continue
		}
		if retry != nil {
			err = retry.err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, err
	}
}

// retryable marks a failure before any byte of a response came, which on a
// reused connection means the server closed it while it was idle. written
// says whether the request (or part of it) had been written: then only an
// idempotent request may be sent again.
type retryable struct {
	err     error
	written bool
}

// idempotent reports whether req may be sent twice, by net/http's rule.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// exchange writes the request on c and reads the response head. On error c
// is closed.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request, head []byte, bigBody io.Reader, trace *httptrace.ClientTrace) (*http.Response, error) {
	// Closing the connection is what ends a blocked write or read when
	// the request is cancelled; stop reports whether that has happened.
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	resp, err := t.writeAndRead(c, req, head, bigBody, trace)
	if err != nil {
		stop()
		t.closeConn(c)
		return nil, err
	}
	// A response without a body (204, 304, Content-Length: 0) is at its
	// end already: closing it unread gives the connection back.
	resp.Body = &body{t: t, c: c, r: resp.Body, stop: stop, keep: !resp.Close && !req.Close, eof: resp.Body == http.NoBody}
	return resp, nil
}

func (t *Transport) writeAndRead(c *conn, req *http.Request, head []byte, bigBody io.Reader, trace *httptrace.ClientTrace) (*http.Response, error) {
	if n, err := c.nc.Write(head); err != nil {
		if trace != nil && trace.WroteRequest != nil {
			trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
		}
		return nil, &retryable{err: fmt.Errorf("http1: writing the request: %w", err), written: n > 0}
	}
	if bigBody != nil {
		src := &readErr{r: io.LimitReader(bigBody, req.ContentLength)}
		n, err := io.Copy(c.nc, src)
		if err != nil {
			if trace != nil && trace.WroteRequest != nil {
				trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
			}
			if src.err != nil {
				return nil, fmt.Errorf("http1: reading the request body: %w", err)
			}
			// A server may answer before it has read the whole body (a
			// 413) and close the connection, which fails the write: its
			// answer is then waiting to be read, and it is the outcome, as
			// net/http's transport returns it. The connection is broken,
			// so the read ends at once when nothing came.
			if resp, rerr := t.readResponse(c, req, trace); rerr == nil {
				resp.Close = true // the request was cut short: the connection cannot carry another
				return resp, nil
			}
			return nil, fmt.Errorf("http1: writing the request body: %w", err)
		}
		if n != req.ContentLength {
			return nil, fmt.Errorf("http1: the request body has %d bytes, its ContentLength says %d", n, req.ContentLength)
		}
		// A longer body would otherwise be cut silently; net/http fails too.
		var probe [1]byte
		if k, _ := io.ReadFull(bigBody, probe[:]); k > 0 {
			return nil, fmt.Errorf("http1: the request body is longer than its ContentLength %d", req.ContentLength)
		}
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return t.readResponse(c, req, trace)
}

// readResponse reads the response head to req on c, skipping informational
// (1xx) responses. Their number has no bound of its own: the bytes read
// for the heads, of the informational responses and the final one together,
// are capped by MaxResponseHeaderBytes, which is how net/http's transport
// bounds them too, so a server sending endless 1xx heads fails with a
// HeaderTooLargeError.
func (t *Transport) readResponse(c *conn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	c.in.limited, c.in.left, c.in.max = true, t.opts.MaxResponseHeaderBytes, t.opts.MaxResponseHeaderBytes
	defer func() { c.in.limited = false }()
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, &retryable{err: fmt.Errorf("http1: the server closed the connection before a response: %w", err), written: true}
		}
		return nil, fmt.Errorf("http1: reading the response: %w", err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			if c.in.left <= 0 {
				// The parser may report a head cut by the cap as
				// malformed (a cut after a CR): the cap is the cause.
				return nil, &HeaderTooLargeError{Limit: c.in.max}
			}
			return nil, fmt.Errorf("http1: reading the response head: %w", err)
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("http1: the server switched protocols (101) on a request that did not ask to")
		case resp.StatusCode >= 100 && resp.StatusCode <= 199:
			continue // informational: the final response follows
		}
		return resp, nil
	}
}

// readErr is a reader that keeps its own error, so that a failed copy
// tells the request body's failure from the connection's.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// body is a response body on its connection.
type body struct {
	t      *Transport
	c      *conn
	r      io.ReadCloser // the body http.ReadResponse framed
	stop   func() bool   // ends the cancellation watch; false once it has closed the connection
	keep   bool          // the response allows the connection to be reused
	eof    bool
	closed bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("http1: read on a closed response body")
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close returns the connection to the pool when the body was read to its
// end, the response and request allow reuse, the request was not cancelled
// and nothing follows the body; it closes the connection otherwise. It
// never reads: a body not at its end (a stream still running) is cut.
func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	live := b.stop()
	if b.eof && b.keep && live && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return nil
	}
	b.t.closeConn(b.c)
	return nil
}

// keyFor finds the server and the proxy a request goes to.
func (t *Transport) keyFor(req *http.Request) (connKey, error) {
	u := req.URL
	if u == nil {
		return connKey{}, errors.New("http1: request has no URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return connKey{}, fmt.Errorf("http1: unsupported scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return connKey{}, errors.New("http1: request URL has no host")
	}
	key := connKey{scheme: u.Scheme, addr: hostPort(u)}
	if t.opts.Proxy == nil {
		return key, nil
	}
	p, err := t.opts.Proxy(req)
	if err != nil {
		return connKey{}, fmt.Errorf("http1: finding the proxy: %w", err)
	}
	if p == nil {
		return key, nil
	}
	if p.Scheme != "http" {
		return connKey{}, fmt.Errorf("http1: proxy %s: only http:// proxies are supported", p.Redacted())
	}
	key.proxy = hostPort(p)
	if p.User != nil {
		pw, _ := p.User.Password()
		key.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pw))
	}
	return key, nil
}

// hostPort is u's host with the scheme's port when it has none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// withoutZone drops the zone of an IPv6 address ("[fe80::1%eth0]:8080"
// becomes "[fe80::1]:8080") from a Host value, as net/http's request writer
// does: the zone names a network interface of this machine, which means
// nothing to the server, and a Host field has no syntax for it.
func withoutZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	end := strings.LastIndexByte(host, ']')
	zone := strings.IndexByte(host, '%')
	if end < 0 || zone < 0 || zone > end {
		return host
	}
	return host[:zone] + host[end:]
}

// excludedHeader reports whether a request header field is one the
// transport writes itself (or, for Trailer, not at all), as net/http's
// request writer excludes them.
func excludedHeader(name string) bool {
	switch name {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// appendRequest appends req's head to buf, and its body when it is small;
// a larger body is returned to be written after the head. It validates
// what it writes: a header field name that is not a token or a value with a
// line break would let a header value inject fields.
func (t *Transport) appendRequest(buf []byte, req *http.Request, key connKey) ([]byte, io.Reader, error) {
	method, host, target, err := requestLine(req, key)
	if err != nil {
		return buf, nil, err
	}
	buf = append(buf, method...)
	buf = append(buf, ' ')
	buf = append(buf, target...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, host...)
	buf = append(buf, "\r\nUser-Agent: "...)
	if ua := req.Header.Get("User-Agent"); ua != "" {
		if !httpguts.ValidHeaderFieldValue(ua) {
			return buf, nil, errors.New("http1: invalid value of request header field User-Agent")
		}
		buf = append(buf, ua...)
	} else {
		buf = append(buf, t.opts.UserAgent...)
	}
	buf = append(buf, "\r\n"...)
	if key.proxy != "" && key.scheme == "http" && key.auth != "" {
		buf = append(buf, "Proxy-Authorization: "...)
		buf = append(buf, key.auth...)
		buf = append(buf, "\r\n"...)
	}
	n, hasBody, err := bodyLength(req)
	if err != nil {
		return buf, nil, err
	}
	if hasBody || (method != http.MethodGet && method != http.MethodHead) {
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, n, 10)
		buf = append(buf, "\r\n"...)
	}
	if buf, err = appendHeaderFields(buf, req.Header); err != nil {
		return buf, nil, err
	}
	if req.Close {
		buf = append(buf, "Connection: close\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	if !hasBody {
		return buf, nil, nil
	}
	if n > inlineBody {
		return buf, req.Body, nil
	}
	return appendBody(buf, req.Body, n)
}

// requestLine is the method, Host and request target req is sent with,
// checked to be safe to write.
func requestLine(req *http.Request, key connKey) (method, host, target string, err error) {
	method = req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !httpguts.ValidHeaderFieldName(method) {
		return "", "", "", fmt.Errorf("http1: invalid method %q", method)
	}
	host = req.Host
	if host == "" {
		host = req.URL.Host
	}
	host = withoutZone(host)
	if !httpguts.ValidHostHeader(host) {
		return "", "", "", fmt.Errorf("http1: invalid Host %q", host)
	}
	target = req.URL.RequestURI()
	if key.proxy != "" && key.scheme == "http" {
		// Through a proxy, an http request names the whole URL.
		target = key.scheme + "://" + req.URL.Host + target
	}
	// url.Parse refuses control characters, but a URL built field by field
	// may carry a line break into the request line. The target is not
	// quoted: a query may hold a key.
	if strings.ContainsFunc(target, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", "", "", errors.New("http1: control character in the request URL")
	}
	return method, host, target, nil
}

// bodyLength is the length of req's body and whether it has one; a body
// of unknown length is refused.
func bodyLength(req *http.Request) (n int64, hasBody bool, err error) {
	n = req.ContentLength
	hasBody = req.Body != nil && req.Body != http.NoBody
	if !hasBody {
		// A length without a body would have the server wait for bytes
		// that never come.
		if n > 0 {
			return 0, false, fmt.Errorf("http1: request ContentLength %d with no body", n)
		}
		n = 0
	}
	if hasBody && n <= 0 {
		if n < 0 {
			return 0, false, errors.New("http1: request body of unknown length (ContentLength -1) is not supported")
		}
		// NewRequest leaves ContentLength 0 for a reader it does not know;
		// a body that is really empty is fine.
		var probe [1]byte
		if k, _ := io.ReadFull(req.Body, probe[:]); k > 0 {
			return 0, false, errors.New("http1: request body of unknown length (ContentLength 0 with a body) is not supported")
		}
		hasBody = false
	}
	return n, hasBody, nil
}

// appendHeaderFields appends the caller's header fields, sorted by name,
// but those the transport writes itself.
func appendHeaderFields(buf []byte, h http.Header) ([]byte, error) {
	keys := make([]string, 0, len(h))
	for k := range h {
		if !excludedHeader(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			return buf, fmt.Errorf("http1: invalid request header field name %q", k)
		}
		for _, v := range h[k] {
			if !httpguts.ValidHeaderFieldValue(v) {
				// The value is not quoted: header values may be credentials.
				return buf, fmt.Errorf("http1: invalid value of request header field %s", k)
			}
			buf = append(buf, k...)
			buf = append(buf, ": "...)
			buf = append(buf, strings.TrimSpace(v)...)
			buf = append(buf, "\r\n"...)
		}
	}
	return buf, nil
}

// appendBody appends the n bytes of a small body after the head, checking
// that the body has exactly n.
func appendBody(buf []byte, body io.Reader, n int64) ([]byte, io.Reader, error) {
	start := len(buf)
	buf = slices.Grow(buf, int(n)+1)[:start+int(n)+1]
	k, err := io.ReadFull(body, buf[start:])
	switch {
	case k < int(n):
		return buf, nil, fmt.Errorf("http1: the request body has %d bytes, its ContentLength says %d: %w", k, n, err)
	case k > int(n):
		return buf, nil, fmt.Errorf("http1: the request body is longer than its ContentLength %d", n)
	}
	return buf[:start+int(n)], nil, nil
}

func (t *Transport) putWriteBuf(b *[]byte) {
	if cap(*b) <= maxPooledWriteBuf {
		*b = (*b)[:0]
		t.writeBufs.Put(b)
	}
}

// get returns a connection for key: an idle one, a new one while the
// bound allows, or else the next one given back or a slot freed. fresh
// skips the idle connections (a retry after a stale one). It reports
// whether the connection was used before.
func (t *Transport) get(ctx context.Context, key connKey, trace *httptrace.ClientTrace, fresh bool) (*conn, bool, error) {
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(key.addr)
	}
	c, err := t.take(ctx, key, fresh)
	if err != nil {
		return nil, false, err
	}
	reused := c != nil
	var idle time.Duration
	if reused {
		idle = time.Since(c.idleSince)
	} else if c, err = t.dial(ctx, key, trace); err != nil {
		return nil, false, err
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused, IdleTime: idle})
	}
	return c, reused, nil
}

// take returns a usable idle connection, or nil with a slot to dial with.
func (t *Transport) take(ctx context.Context, key connKey, fresh bool) (*conn, error) {
	t.mu.Lock()
	p := t.pools[key]
	if p == nil {
		p = &pool{key: key}
		t.pools[key] = p
	}
	if !fresh && len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		t.mu.Unlock()
		if t.usable(c) {
			return c, nil
		}
		// The slot of a connection too old or closed by the server passes
		// to this request.
		c.nc.Close()
		return nil, nil
	}
	if t.opts.MaxConns == 0 || p.open < t.opts.MaxConns {
		p.open++
		t.mu.Unlock()
		return nil, nil
	}
	wait := make(chan *conn, 1)
	p.waiters = append(p.waiters, wait)
	t.mu.Unlock()

	select {
	case c := <-wait:
		if c != nil && !t.usable(c) {
			c.nc.Close()
			c = nil
		}
		return c, nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	i := slices.Index(p.waiters, wait)
	if i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
	}
	t.mu.Unlock()
	if i < 0 {
		// Handed a connection or a slot while giving up: pass it on.
		if c := <-wait; c != nil {
			t.put(c)
		} else {
			t.releaseSlot(p)
		}
	}
	return nil, fmt.Errorf("http1: waiting for one of %d connections: %w", t.opts.MaxConns, ctx.Err())
}

// usable reports whether an idle connection may carry another request: not
// idle for longer than IdleConnTimeout, and neither closed by the server
// nor holding bytes nobody asked for, in the TLS layer or on the socket.
func (t *Transport) usable(c *conn) bool {
	return time.Since(c.idleSince) <= t.opts.IdleConnTimeout && !tlsUnsolicited(c.nc) && !closedOrUnsolicited(c.raw)
}

// tlsUnsolicited reports whether a TLS connection holds input nobody asked
// for. A TLS record that arrived together with the last record of the
// previous response was read from the socket with it and waits inside the
// TLS layer, where the check of the socket cannot see it; an answer sent on
// an idle connection in a record of its own would otherwise be taken for
// the next request's response. A read with a deadline already past returns
// what the TLS layer holds (a handshake message, such as a session ticket,
// is taken in by it and is not data) and fails at once with the deadline
// error when it holds nothing, without reading the socket; that error does
// not break a TLS connection.
func tlsUnsolicited(nc net.Conn) bool {
	tc, ok := nc.(*tls.Conn)
	if !ok {
		return false
	}
	if tc.SetReadDeadline(time.Unix(1, 0)) != nil {
		return true
	}
	var b [1]byte
	n, err := tc.Read(b[:])
	if tc.SetReadDeadline(time.Time{}) != nil {
		return true
	}
	return n > 0 || !errors.Is(err, os.ErrDeadlineExceeded)
}

// dial opens a connection for key, through the proxy when there is one, and
// completes the TLS handshake for https. A failure frees the slot.
func (t *Transport) dial(ctx context.Context, key connKey, trace *httptrace.ClientTrace) (*conn, error) {
	p := t.poolOf(key)
	c, err := t.dialConn(ctx, key, trace)
	if err != nil {
		t.releaseSlot(p)
		return nil, err
	}
	c.pool = p
	return c, nil
}

func (t *Transport) dialConn(ctx context.Context, key connKey, trace *httptrace.ClientTrace) (*conn, error) {
	addr := key.addr
	if key.proxy != "" {
		addr = key.proxy
	}
	// The dialer calls the trace's ConnectStart and ConnectDone (and the
	// DNS hooks) itself, through the request's context, as it does for
	// net/http's Transport: calling them here too would report each twice.
	raw, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		if key.proxy != "" {
			return nil, fmt.Errorf("http1: connecting to the proxy: %w", err)
		}
		return nil, err
	}
	c := &conn{nc: raw, raw: raw}
	c.in.nc = raw
	c.br = bufio.NewReaderSize(&c.in, t.opts.ReadBufferSize)
	if key.scheme != "https" {
		return c, nil
	}
	if key.proxy != "" {
		if err := t.connect(ctx, c, key); err != nil {
			raw.Close()
			return nil, err
		}
	}
	if err := t.handshake(ctx, c, key, trace); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

// connect opens a tunnel to key.addr through the proxy c is connected to.
// The proxy's answer is part of setting up the connection, so it is bounded
// by DialTimeout as the dial is: a proxy that accepts and never answers
// does not hold the request for longer.
func (t *Transport) connect(ctx context.Context, c *conn, key connKey) error {
	cctx, cancel := context.WithTimeout(ctx, t.opts.DialTimeout)
	defer cancel()
	stop := context.AfterFunc(cctx, func() { c.raw.Close() })
	defer stop()
	err := t.connectOn(c, key)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("http1: the proxy did not answer CONNECT within %v", t.opts.DialTimeout)
	}
	return err
}

func (t *Transport) connectOn(c *conn, key connKey) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n", key.addr, key.addr, t.opts.UserAgent)
	if key.auth != "" {
		fmt.Fprintf(&b, "Proxy-Authorization: %s\r\n", key.auth)
	}
	b.WriteString("\r\n")
	if _, err := c.raw.Write(b.Bytes()); err != nil {
		return fmt.Errorf("http1: asking the proxy for a tunnel: %w", err)
	}
	c.in.limited, c.in.left, c.in.max = true, t.opts.MaxResponseHeaderBytes, t.opts.MaxResponseHeaderBytes
	resp, err := http.ReadResponse(c.br, &http.Request{Method: http.MethodConnect})
	c.in.limited = false
	if err != nil {
		return fmt.Errorf("http1: reading the proxy's answer to CONNECT: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("http1: the proxy refused the tunnel to %s: %s", key.addr, resp.Status)
	}
	if c.br.Buffered() > 0 {
		return fmt.Errorf("http1: the proxy sent %d bytes after its CONNECT answer", c.br.Buffered())
	}
	return nil
}

// handshake runs TLS over c's connection, offering HTTP/1.1 only.
func (t *Transport) handshake(ctx context.Context, c *conn, key connKey, trace *httptrace.ClientTrace) error {
	cfg := t.opts.TLSConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(key.addr)
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(c.raw, cfg)
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	hctx, cancel := context.WithTimeout(ctx, t.opts.TLSHandshakeTimeout)
	err := tc.HandshakeContext(hctx)
	cancel()
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(tc.ConnectionState(), err)
	}
	if err != nil {
		return fmt.Errorf("http1: TLS handshake with %s: %w", key.addr, err)
	}
	c.nc = tc
	c.in.nc = tc
	c.br.Reset(&c.in)
	return nil
}

func (t *Transport) poolOf(key connKey) *pool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pools[key]
}

// put gives a connection back: to the oldest waiter, else to the idle list.
func (t *Transport) put(c *conn) {
	p := c.pool
	c.idleSince = time.Now()
	t.mu.Lock()
	if wait := p.oldestWaiter(); wait != nil {
		t.mu.Unlock()
		wait <- c
		return
	}
	p.idle = append(p.idle, c)
	t.mu.Unlock()
}

// oldestWaiter removes the oldest waiting request from the queue and
// returns its channel, or nil when none waits. Transport.mu must be held.
func (p *pool) oldestWaiter() chan *conn {
	if len(p.waiters) == 0 {
		return nil
	}
	wait := p.waiters[0]
	p.waiters = slices.Delete(p.waiters, 0, 1)
	return wait
}

// closeConn closes c and frees its slot.
func (t *Transport) closeConn(c *conn) {
	c.nc.Close()
	t.releaseSlot(c.pool)
}

// releaseSlot frees a connection slot: it passes to the oldest waiter,
// which dials with it.
func (t *Transport) releaseSlot(p *pool) {
	t.mu.Lock()
	if wait := p.oldestWaiter(); wait != nil {
		t.mu.Unlock()
		wait <- nil
		return
	}
	p.open--
	t.mu.Unlock()
}

// CloseIdleConnections closes the connections not in use. Connections in
// use are closed when their bodies are.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*conn
	for _, p := range t.pools {
		idle = append(idle, p.idle...)
		p.open -= len(p.idle)
		p.idle = nil
	}
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// OpenConns returns the connections to the servers, idle or in use, and the
// requests waiting for one.
func (t *Transport) OpenConns() (open, waiting int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.pools {
		open += p.open
		waiting += len(p.waiters)
	}
	return open, waiting
}
