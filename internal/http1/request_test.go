package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestGetAndPost(t *testing.T) {
	srv, _ := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", strconv.Itoa(len(r.Method)+1+len(b)))
		fmt.Fprintf(w, "%s %s", r.Method, b)
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)

	resp, got := roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.URL+"/x", nil))
	if resp.StatusCode != http.StatusOK || got != "GET " || resp.ContentLength != 4 {
		t.Errorf("GET: status %d, content length %d, body %q; want 200, 4, %q", resp.StatusCode, resp.ContentLength, got, "GET ")
	}
	resp, got = roundTrip(t, tr, newRequest(t, ctx, http.MethodPost, srv.URL+"/x", strings.NewReader("hello")))
	if resp.StatusCode != http.StatusOK || got != "POST hello" {
		t.Errorf("POST: status %d, body %q; want 200, %q", resp.StatusCode, got, "POST hello")
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<10) // 48 KiB: written after the head
	resp, got = roundTrip(t, tr, newRequest(t, ctx, http.MethodPut, srv.URL+"/x", bytes.NewReader(big)))
	if resp.StatusCode != http.StatusOK || got != "PUT "+string(big) {
		t.Errorf("PUT of %d bytes: status %d, body of %d bytes; want 200 and the body echoed", len(big), resp.StatusCode, len(got))
	}
}

// TestChunkedBodyStreams proves the body is handed over as it comes: the
// handler sends the next event only after the test has read the previous
// one, so a transport that buffered the body would hang until the deadline.
func TestChunkedBodyStreams(t *testing.T) {
	const events = 3
	next := make(chan struct{})
	srv, _ := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range events {
			fmt.Fprintf(w, "event %d\n", i)
			w.(http.Flusher).Flush()
			if i < events-1 {
				select {
				case <-next:
				case <-r.Context().Done():
					return
				}
			}
		}
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, srv.URL, nil))
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.ContentLength != -1 {
		t.Fatalf("transfer encoding %v, content length %d; want chunked, -1", resp.TransferEncoding, resp.ContentLength)
	}
	br := bufio.NewReader(resp.Body)
	for i := range events {
		line, err := br.ReadString('\n')
		if want := fmt.Sprintf("event %d\n", i); line != want || err != nil {
			t.Fatalf("event %d: %q, %v; want %q", i, line, err, want)
		}
		if i < events-1 {
			next <- struct{}{}
		}
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || err != nil {
		t.Fatalf("after the last event: %q, %v; want a clean end", rest, err)
	}
}

func TestNoBodyStatuses(t *testing.T) {
	for _, status := range []int{http.StatusNoContent, http.StatusNotModified} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
			}))
			tr := newTransport(t, Options{})
			ctx := testCtx(t)
			for range 2 {
				resp, got := roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.URL, nil))
				if resp.StatusCode != status || got != "" {
					t.Fatalf("status %d, body %q; want %d and no body", resp.StatusCode, got, status)
				}
			}
			if total, _, _ := cc.counts(); total != 1 {
				t.Errorf("%d connections for two %d responses; want 1 (reused)", total, status)
			}
		})
	}
}

// captureServer answers every request with okResponse and sends the raw
// bytes of each request (head and Content-Length body) to the channel.
func captureServer(t *testing.T) (*rawServer, <-chan string) {
	got := make(chan string, 16)
	s := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			head := readHead(br)
			if head == "" {
				return
			}
			var n int
			for _, line := range strings.Split(head, "\r\n") {
				if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
					n, _ = strconv.Atoi(v)
				}
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			got <- head + string(body)
			if _, err := io.WriteString(c, okResponse); err != nil {
				return
			}
		}
	})
	return s, got
}

func TestRequestHead(t *testing.T) {
	srv, got := captureServer(t)
	host := srv.ln.Addr().String()
	tr := newTransport(t, Options{})
	ctx := testCtx(t)

	cases := []struct {
		name  string
		build func() *http.Request
		want  string
	}{{
		name:  "GET defaults",
		build: func() *http.Request { return newRequest(t, ctx, http.MethodGet, srv.url()+"/a/b?q=1&r=2", nil) },
		want:  "GET /a/b?q=1&r=2 HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: omnibench\r\n\r\n",
	}, {
		name: "POST with sorted headers and framing headers ignored",
		build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.url()+"/v1/chat", strings.NewReader("hello"))
			req.Header.Set("X-Zeta", "z")
			req.Header.Add("Accept", "text/event-stream")
			req.Header.Add("X-Alpha", "a1")
			req.Header.Add("X-Alpha", "a2")
			req.Header.Set("Content-Length", "999")
			req.Header.Set("Transfer-Encoding", "chunked")
			req.Header.Set("Trailer", "X-T")
			req.Header.Set("User-Agent", "bench/2")
			return req
		},
		want: "POST /v1/chat HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: bench/2\r\nContent-Length: 5\r\n" +
			"Accept: text/event-stream\r\nX-Alpha: a1\r\nX-Alpha: a2\r\nX-Zeta: z\r\n\r\nhello",
	}, {
		name: "POST without body, Host override, Connection close",
		build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.url()+"/", nil)
			req.Host = "example.test"
			req.Close = true
			return req
		},
		want: "POST / HTTP/1.1\r\nHost: example.test\r\nUser-Agent: omnibench\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	}, {
		// The zone names an interface of the client's machine: net/http
		// leaves it out of Host, and so must this transport.
		name: "IPv6 zone left out of Host",
		build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.url()+"/", nil)
			req.Host = "[fe80::1%eth0]:8000"
			return req
		},
		want: "GET / HTTP/1.1\r\nHost: [fe80::1]:8000\r\nUser-Agent: omnibench\r\n\r\n",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, tr, tc.build())
			if head := recv(t, ctx, "the request", got); head != tc.want {
				t.Errorf("request sent:\n%q\nwant:\n%q", head, tc.want)
			}
		})
	}

	t.Run("UserAgent option", func(t *testing.T) {
		tr := newTransport(t, Options{UserAgent: "custom/1"})
		roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.url()+"/", nil))
		head := recv(t, ctx, "the request", got)
		if !strings.Contains(head, "\r\nUser-Agent: custom/1\r\n") {
			t.Errorf("request sent:\n%q\nwant User-Agent: custom/1", head)
		}
	})
}

// TestRequestBodyClosed checks the RoundTripper contract: the request body
// is closed, on success as on error.
func TestRequestBodyClosed(t *testing.T) {
	srv, got := captureServer(t)
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	for _, n := range []int{5, inlineBody + 1} {
		body := newCloseRecorder(bytes.Repeat([]byte("x"), n))
		req := newRequest(t, ctx, http.MethodPost, srv.url(), body)
		req.ContentLength = int64(n)
		roundTrip(t, tr, req)
		recv(t, ctx, "the request", got)
		if !body.wasClosed() {
			t.Errorf("a request body of %d bytes was not closed after a successful round trip", n)
		}
	}
	body := newCloseRecorder([]byte("x"))
	req := newRequest(t, ctx, http.MethodPost, srv.url(), body)
	req.ContentLength = 5 // longer than the body: an error
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("RoundTrip with a body shorter than its ContentLength: no error")
	}
	if !body.wasClosed() {
		t.Error("the request body was not closed after a failed round trip")
	}
}

// secret is a header value the validation errors must never show.
const secret = "Bearer s3cr3t-t0ken"

func TestValidationErrors(t *testing.T) {
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	tr := newTransport(t, Options{})
	ctx := testCtx(t)
	big := inlineBody + 100

	cases := []struct {
		name  string
		build func() *http.Request
		want  string // in the error message
		// dials says the head was valid and went out before the body
		// turned out wrong.
		dials bool
	}{
		{name: "CR LF in a header value", want: "invalid value of request header field Authorization", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Header["Authorization"] = []string{secret + "\r\nX-Injected: 1"}
			return req
		}},
		{name: "LF in a header value", want: "invalid value of request header field X-Api-Key", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Header["X-Api-Key"] = []string{secret + "\nX-Injected: 1"}
			return req
		}},
		{name: "CR LF in User-Agent", want: "User-Agent", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Header["User-Agent"] = []string{secret + "\r\nX-Injected: 1"}
			return req
		}},
		{name: "invalid header name", want: `invalid request header field name "Bad Name"`, build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Header["Bad Name"] = []string{secret}
			return req
		}},
		{name: "invalid method", want: "invalid method", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Method = "GE T"
			req.Header.Set("Authorization", secret)
			return req
		}},
		{name: "control character in the URL", want: "control character in the request URL", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.URL.RawQuery = "key=" + secret + "\r\nX-Injected: 1"
			return req
		}},
		{name: "invalid Host", want: "invalid Host", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.Host = "a b\r\n"
			return req
		}},
		{name: "body of unknown length", want: "unknown length (ContentLength -1)", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("abc")))
			req.ContentLength = -1
			return req
		}},
		{name: "body with ContentLength 0", want: "unknown length (ContentLength 0 with a body)", build: func() *http.Request {
			return newRequest(t, ctx, http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("abc")))
		}},
		{name: "ContentLength without a body", want: "ContentLength 5 with no body", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, nil)
			req.ContentLength = 5
			return req
		}},
		{name: "small body shorter than ContentLength", want: "has 3 bytes, its ContentLength says 5", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, strings.NewReader("abc"))
			req.ContentLength = 5
			return req
		}},
		{name: "small body longer than ContentLength", want: "longer than its ContentLength 2", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, strings.NewReader("abc"))
			req.ContentLength = 2
			return req
		}},
		{name: "bad scheme", want: `unsupported scheme "ftp"`, build: func() *http.Request {
			return newRequest(t, ctx, http.MethodGet, "ftp://"+srv.Listener.Addr().String()+"/", nil)
		}},
		{name: "no host", want: "no host", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.URL = &url.URL{Scheme: "http", Path: "/"}
			return req
		}},
		{name: "no URL", want: "no URL", build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodGet, srv.URL, nil)
			req.URL = nil
			return req
		}},
		// Last: the server may learn of these connections only after
		// RoundTrip returned, so a later case could see them as its own.
		{name: "big body shorter than ContentLength", dials: true, want: fmt.Sprintf("has %d bytes, its ContentLength says %d", big, big+1), build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, bytes.NewReader(make([]byte, big)))
			req.ContentLength = int64(big + 1)
			return req
		}},
		{name: "big body longer than ContentLength", dials: true, want: fmt.Sprintf("longer than its ContentLength %d", big-1), build: func() *http.Request {
			req := newRequest(t, ctx, http.MethodPost, srv.URL, bytes.NewReader(make([]byte, big)))
			req.ContentLength = int64(big - 1)
			return req
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _, _ := cc.counts()
			resp, err := tr.RoundTrip(tc.build())
			if err == nil {
				resp.Body.Close()
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows a header value", err)
			}
			if open, waiting := tr.OpenConns(); open != 0 || waiting != 0 {
				t.Errorf("after the error: %d connections, %d waiting; want none", open, waiting)
			}
			if after, _, _ := cc.counts(); !tc.dials && after != before {
				t.Errorf("the server got a connection for an invalid request")
			}
		})
	}
}

func TestNegativeOption(t *testing.T) {
	if _, err := New(Options{MaxConns: -1}); err == nil || !strings.Contains(err.Error(), "negative option") {
		t.Errorf("New(MaxConns: -1): %v; want a negative option error", err)
	}
}
