package http1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fuzzHeadLimit is the head cap of the fuzzed transport, small so that the
// huge-head seed stays small; inputs up to fuzzCompared bytes are under it
// whatever the read-ahead, and are compared with net/http's parser.
const (
	fuzzHeadLimit = 16 << 10
	fuzzCompared  = defaultReadBufferSize
	fuzzBodyLimit = 1 << 20
)

// FuzzResponse sends the input as a server's whole answer, then closes the
// connection. Whatever the bytes, RoundTrip returns or the body ends within
// the deadline, without a panic; and when net/http's own parser, reading
// the same bytes from memory, finds a final response whose body reads
// cleanly, the transport returns the same status and body.
func FuzzResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"d\r\ndata: hello\n\n\r\n0\r\nX-Trailer: t\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
		"HTTP/1.0 200 OK\r\n\r\nuntil the end",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03 garbage, a TLS hello",
		"HTTP/1.1 200 OK\r\nX-Huge: " + strings.Repeat("h", fuzzHeadLimit+100) + "\r\n\r\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatalf("listen: %v", err)
	}
	f.Cleanup(func() { ln.Close() })
	url := "http://" + ln.Addr().String() + "/"

	f.Fuzz(func(t *testing.T, data []byte) {
		deadline := time.Now().Add(5 * time.Second)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		served := make(chan struct{})
		go func() {
			defer close(served)
			ln.(*net.TCPListener).SetDeadline(deadline)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(deadline)
			readHead(bufio.NewReader(c)) // so the close sends a FIN, not a reset
			c.Write(data)
		}()
		defer func() { <-served }()

		tr, err := New(Options{MaxResponseHeaderBytes: fuzzHeadLimit})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, rtErr := tr.RoundTrip(req)
		var body []byte
		var bodyErr error
		if rtErr == nil {
			body, bodyErr = io.ReadAll(io.LimitReader(resp.Body, fuzzBodyLimit))
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("no end within the deadline for %q: round trip %v, body %v", data, rtErr, bodyErr)
		}

		if len(data) > fuzzCompared {
			return
		}
		ref, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), req)
		if err != nil || ref.StatusCode < 200 {
			return
		}
		refBody, err := io.ReadAll(io.LimitReader(ref.Body, fuzzBodyLimit))
		if err != nil {
			return
		}
		switch {
		case rtErr != nil:
			t.Fatalf("net/http reads status %d and %d body bytes from %q; RoundTrip failed: %v", ref.StatusCode, len(refBody), data, rtErr)
		case bodyErr != nil:
			t.Fatalf("net/http reads %d body bytes from %q; the body read failed: %v", len(refBody), data, bodyErr)
		case resp.StatusCode != ref.StatusCode || !bytes.Equal(body, refBody):
			t.Fatalf("from %q: status %d, body %q; net/http reads %d, %q", data, resp.StatusCode, body, ref.StatusCode, refBody)
		}
	})
}
