package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServerClosesAfterOneResponse: the server answers with a keep-alive
// response and closes the connection; the next request must not fail on
// the dead connection (the liveness peek drops it, or the retry resends).
func TestServerClosesAfterOneResponse(t *testing.T) {
	forEachScheme(t, testServerClosesAfterOneResponse)
}

func testServerClosesAfterOneResponse(t *testing.T, sc scheme) {
	closed := make(chan struct{}, 4)
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
		if readHead(br) == "" {
			return
		}
		c.Write([]byte(okResponse))
		c.Close()
		closed <- struct{}{}
	})
	ctx := testCtx(t)
	for i := range 3 {
		if _, got := roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.url(), nil)); got != "ok" {
			t.Fatalf("request %d: body %q; want ok", i, got)
		}
		recv(t, ctx, "the server's close", closed)
	}
	if n := srv.acceptCount(); n != 3 {
		t.Errorf("server accepted %d connections; want 3", n)
	}
}

// TestRetryOnReusedConnectionClosedBeforeResponse: the server reads the
// second request on a connection and closes it without a byte of answer,
// as a server does that times an idle connection out just as a request
// comes. An idempotent request (here a POST with an Idempotency-Key, by
// net/http's rule) is sent once more on a new connection; a request body
// larger than the inline limit is rewound through GetBody.
func TestRetryOnReusedConnectionClosedBeforeResponse(t *testing.T) {
	forEachScheme(t, testRetryOnReusedConnectionClosedBeforeResponse)
}

func testRetryOnReusedConnectionClosedBeforeResponse(t *testing.T, sc scheme) {
	bodies := make(chan []byte, 8)
	srv := newRawServerOver(t, sc, func(c net.Conn, br *bufio.Reader) {
		_, b, err := readRequest(br)
		if err != nil {
			return
		}
		bodies <- b
		c.Write([]byte(okResponse))
		readRequest(br) // and close without answering
	})
	for _, size := range []int{0, 5, inlineBody + 1000} {
		t.Run(fmt.Sprintf("body of %d bytes", size), func(t *testing.T) {
			// MaxConns 1: the retry must get the slot of the stale connection.
			tr := srv.transport(t, Options{MaxConns: 1})
			ctx := testCtx(t)
			var log traceLog
			body := bytes.Repeat([]byte("b"), size)
			for i := range 2 {
				req := newRequest(t, withTrace(ctx, &log), http.MethodPost, srv.url(), bytes.NewReader(body))
				req.Header.Set("Idempotency-Key", fmt.Sprint(i))
				var rewound []*closeRecorder
				req.GetBody = func() (io.ReadCloser, error) {
					rewound = append(rewound, newCloseRecorder(body))
					return rewound[len(rewound)-1], nil
				}
				if _, got := roundTrip(t, tr, req); got != "ok" {
					t.Fatalf("request %d: body %q; want ok", i, got)
				}
				if b := recv(t, ctx, "the request body", bodies); !bytes.Equal(b, body) {
					t.Fatalf("request %d: server got %d body bytes; want %d", i, len(b), len(body))
				}
				for _, r := range rewound {
					if !r.wasClosed() {
						t.Errorf("request %d: the body from GetBody was not closed", i)
					}
				}
				if wantRewound := i == 1 && size > inlineBody; (len(rewound) == 1) != wantRewound {
					t.Errorf("request %d: GetBody called %d times; want it called %v", i, len(rewound), wantRewound)
				}
			}
			// The second request: on the reused connection, then once more
			// on a new one.
			if _, reused := log.take(); !slices.Equal(reused, []bool{false, true, false}) {
				t.Errorf("GotConn Reused: %v; want [false true false]", reused)
			}
			if open, waiting := tr.OpenConns(); open != 1 || waiting != 0 {
				t.Errorf("OpenConns = %d, %d; want 1, 0", open, waiting)
			}
		})
	}
}

// TestNoRetryOfPOSTTheServerRead: the same server as above, but the POST
// is not idempotent: the server has read it, so it is not sent again, and
// the error says the server closed the connection.
func TestNoRetryOfPOSTTheServerRead(t *testing.T) { forEachScheme(t, testNoRetryOfPOSTTheServerRead) }

func testNoRetryOfPOSTTheServerRead(t *testing.T, sc scheme) {
	got := make(chan struct{}, 8)
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
		for i := 0; ; i++ {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			got <- struct{}{}
			if i > 0 {
				return // the second request on a connection: closed unanswered
			}
			c.Write([]byte(okResponse))
		}
	})
	ctx := testCtx(t)
	var log traceLog
	post := func() (*http.Response, error) {
		return tr.RoundTrip(newRequest(t, withTrace(ctx, &log), http.MethodPost, srv.url(), bytes.NewReader([]byte("b"))))
	}
	resp, err := post()
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	recv(t, ctx, "the first request", got)
	resp, err = post()
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error; the server closed the connection without answering")
	}
	if !strings.Contains(err.Error(), "closed the connection before a response") {
		t.Errorf("error %q does not say the server closed the connection", err)
	}
	recv(t, ctx, "the second request", got)
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, true}) {
		t.Errorf("GotConn Reused: %v; want [false true] (no retry)", reused)
	}
	if n := srv.acceptCount(); n != 1 {
		t.Errorf("server accepted %d connections; want 1 (no retry)", n)
	}
}

// TestNoRetryOnNewConnection: a new connection closed before an answer is
// the server's failure, not a stale connection: no retry.
func TestNoRetryOnNewConnection(t *testing.T) { forEachScheme(t, testNoRetryOnNewConnection) }

func testNoRetryOnNewConnection(t *testing.T, sc scheme) {
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) { readHead(br) })
	ctx := testCtx(t)
	resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, srv.url(), nil))
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error from a server that closed without answering")
	}
	if n := srv.acceptCount(); n != 1 {
		t.Errorf("server accepted %d connections; want 1 (no retry)", n)
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0", open)
	}
}

// TestNoRetryWithoutGetBody: a big body that cannot be rewound is not sent
// again; the error is the stale connection's.
func TestNoRetryWithoutGetBody(t *testing.T) { forEachScheme(t, testNoRetryWithoutGetBody) }

func testNoRetryWithoutGetBody(t *testing.T, sc scheme) {
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err != nil {
			return
		}
		c.Write([]byte(okResponse))
		readRequest(br)
	})
	ctx := testCtx(t)
	roundTrip(t, tr, newRequest(t, ctx, http.MethodGet, srv.url(), nil))
	req := newRequest(t, ctx, http.MethodPost, srv.url(), bytes.NewReader(make([]byte, inlineBody+1)))
	req.Header.Set("Idempotency-Key", "k") // retryable but for its body
	req.GetBody = nil
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error; want the stale connection's")
	}
	if n := srv.acceptCount(); n != 1 {
		t.Errorf("server accepted %d connections; want 1 (no retry)", n)
	}
}

// TestIdleConnTimeout: with a timeout of 1 ns every idle connection is too
// old when it would be taken, so nothing is reused.
func TestIdleConnTimeout(t *testing.T) {
	srv, cc := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr := newTransport(t, Options{IdleConnTimeout: time.Nanosecond})
	ctx := testCtx(t)
	var log traceLog
	for range 3 {
		roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, srv.URL, nil))
	}
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, false, false}) {
		t.Errorf("GotConn Reused: %v; want [false false false]", reused)
	}
	if total, _, _ := cc.counts(); total != 3 {
		t.Errorf("server saw %d connections; want 3", total)
	}
	if open, _ := tr.OpenConns(); open != 1 {
		t.Errorf("OpenConns = %d; want 1 (the last one, idle)", open)
	}
}
