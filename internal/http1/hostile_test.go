package http1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// answerServer answers the first request of every connection with answer
// and then waits for the test's end (or closes at once when closeAfter),
// speaking sc; it returns a transport with opts that trusts it.
func answerServer(t *testing.T, sc scheme, opts Options, answer string, closeAfter bool) (*rawServer, *Transport) {
	done := make(chan struct{})
	srv, tr := schemeServer(t, sc, opts, func(c net.Conn, br *bufio.Reader) {
		if readHead(br) == "" {
			return
		}
		if _, err := io.WriteString(c, answer); err != nil || closeAfter {
			return
		}
		<-done
	})
	t.Cleanup(func() { close(done) }) // runs before the server's cleanup, which waits for the handlers
	return srv, tr
}

func TestHostileResponseHeads(t *testing.T) {
	info := func(n int) string { return strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", n) }
	cases := []struct {
		name, answer string
		opts         Options
		want         string // in the error; "" for success with body "ok"
	}{
		{name: "garbage", answer: "SSH-2.0-OpenSSH_9.6\r\n\r\n", want: "malformed HTTP"},
		{name: "bad status code", answer: "HTTP/1.1 2x0 OK\r\n\r\n", want: "malformed HTTP status code"},
		{name: "closed before a byte", answer: "", want: "closed the connection before a response"},
		{name: "closed inside the head", answer: "HTTP/1.1 200 OK\r\nContent-Le", want: "malformed MIME header"},
		{name: "closed inside the status line", answer: "HTTP/1.1 200", want: "unexpected EOF"},
		{name: "informational skipped", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" + okResponse},
		// No count bound: the head cap bounds them (TestHeaderTooLarge).
		{name: "many informational", answer: info(50) + okResponse},
		{name: "switching protocols", answer: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", want: "switched protocols (101)"},
		{name: "head under the cap", answer: "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", 800) + "\r\nContent-Length: 2\r\n\r\nok", opts: Options{MaxResponseHeaderBytes: 1024}},
	}
	forEachScheme(t, func(t *testing.T, sc scheme) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) { hostileHead(t, sc, tc.opts, tc.answer, tc.want) })
		}
	})
}

// hostileHead sends a request to a server answering answer over sc and
// checks the outcome: an error containing want, or ("" want) a 200 "ok".
func hostileHead(t *testing.T, sc scheme, opts Options, answer, want string) {
	srv, tr := answerServer(t, sc, opts, answer, true)
	ctx := testCtx(t)
	resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, srv.url(), nil))
	if want == "" {
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok" || err != nil {
			t.Fatalf("status %d, body %q, %v; want 200 ok", resp.StatusCode, b, err)
		}
		return
	}
	if err == nil {
		resp.Body.Close()
		t.Fatalf("status %d; want an error containing %q", resp.StatusCode, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q; want it to contain %q", err, want)
	}
	if open, waiting := tr.OpenConns(); open != 0 || waiting != 0 {
		t.Errorf("OpenConns after the error = %d, %d; want 0, 0", open, waiting)
	}
}

func TestHeaderTooLarge(t *testing.T) {
	const limit = 1024
	cases := map[string]string{
		"one big field":         "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 4*limit) + "\r\n\r\n",
		"many fields":           "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-F: 0123456789\r\n", limit/4) + "\r\n",
		"informational heads":   strings.Repeat("HTTP/1.1 100 Continue\r\nX-Pad: "+strings.Repeat("p", limit/3)+"\r\n\r\n", 4) + okResponse,
		"endless informational": strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", limit) + okResponse,
		"endless status line":   "HTTP/1.1 200 " + strings.Repeat("O", 4*limit),
		"endless continuation":  "HTTP/1.1 200 OK\r\nX-A: 1\r\n" + strings.Repeat(" more\r\n", limit),
	}
	forEachScheme(t, func(t *testing.T, sc scheme) {
		for name, answer := range cases {
			t.Run(name, func(t *testing.T) {
				srv, tr := answerServer(t, sc, Options{MaxResponseHeaderBytes: limit}, answer, false)
				resp, err := tr.RoundTrip(newRequest(t, testCtx(t), http.MethodGet, srv.url(), nil))
				if err == nil {
					resp.Body.Close()
					t.Fatal("no error for a head over the cap")
				}
				var tooLarge *HeaderTooLargeError
				if !errors.As(err, &tooLarge) || tooLarge.Limit != limit {
					t.Fatalf("error %v (%T); want a *HeaderTooLargeError with Limit %d", err, err, limit)
				}
			})
		}
	})
}

func TestServerNeverAnswers(t *testing.T) { forEachScheme(t, testServerNeverAnswers) }

func testServerNeverAnswers(t *testing.T, sc scheme) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	srv, tr := schemeServer(t, sc, Options{}, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		got <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	ctx := testCtx(t)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(newRequest(t, rctx, http.MethodGet, srv.url(), nil))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	recv(t, ctx, "the request at the server", got)
	cancel()
	if err := recv(t, ctx, "RoundTrip to return after cancel", done); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip after cancel: %v; want an error wrapping context.Canceled", err)
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0", open)
	}
}

func TestServerStopsMidBody(t *testing.T) {
	cases := map[string]string{
		"content length": "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789",
		"chunked":        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		"inside a chunk": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nhel",
	}
	forEachScheme(t, func(t *testing.T, sc scheme) {
		for name, answer := range cases {
			t.Run(name, func(t *testing.T) {
				srv, tr := answerServer(t, sc, Options{}, answer, true)
				resp, err := tr.RoundTrip(newRequest(t, testCtx(t), http.MethodGet, srv.url(), nil))
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("reading a cut body: %v; want io.ErrUnexpectedEOF", err)
				}
				if open, _ := tr.OpenConns(); open != 0 {
					t.Errorf("OpenConns = %d; want 0", open)
				}
			})
		}
	})
}

func TestCancelDuringBodyRead(t *testing.T) { forEachScheme(t, testCancelDuringBodyRead) }

func testCancelDuringBodyRead(t *testing.T, sc scheme) {
	srv, tr := answerServer(t, sc, Options{}, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n", false)
	ctx := testCtx(t)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := tr.RoundTrip(newRequest(t, rctx, http.MethodGet, srv.url(), nil))
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); line != "first\n" || err != nil {
		t.Fatalf("first line %q, %v", line, err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := br.ReadByte() // blocks: the server sends nothing more
		readErr <- err
	}()
	cancel()
	if err := recv(t, ctx, "the blocked read to end", readErr); err == nil {
		t.Fatal("read after cancel: no error")
	}
	resp.Body.Close()
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0", open)
	}
}

// TestAnswerBeforeBodyRead: a server that answers 413 after the request
// head and closes the connection without reading the body fails the
// client's write of the body (broken pipe or reset); the answer is the
// outcome, as net/http returns it. The body is far larger than the socket
// buffers, so the write always fails.
func TestAnswerBeforeBodyRead(t *testing.T) { forEachScheme(t, testAnswerBeforeBodyRead) }

func testAnswerBeforeBodyRead(t *testing.T, sc scheme) {
	const answer = "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large"
	srv, tr := answerServer(t, sc, Options{}, answer, true)
	const size = 64 << 20
	req := newRequest(t, testCtx(t), http.MethodPost, srv.url(), io.LimitReader(zeros{}, size))
	req.ContentLength = size
	resp, got := roundTrip(t, tr, req)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || got != "too large" {
		t.Fatalf("status %d, body %q; want 413 too large", resp.StatusCode, got)
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0 (the connection cannot carry another request)", open)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
