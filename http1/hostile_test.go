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
// and then waits for the test's end (or closes at once when closeAfter).
func answerServer(t *testing.T, answer string, closeAfter bool) *rawServer {
	var s *rawServer
	s = newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if readHead(br) == "" {
			return
		}
		if _, err := io.WriteString(c, answer); err != nil || closeAfter {
			return
		}
		<-s.done
	})
	return s
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
		{name: "five informational", answer: info(5) + okResponse},
		{name: "six informational", answer: info(6) + okResponse, want: "more than 5 informational"},
		{name: "switching protocols", answer: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", want: "switched protocols (101)"},
		{name: "head under the cap", answer: "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", 800) + "\r\nContent-Length: 2\r\n\r\nok", opts: Options{MaxResponseHeaderBytes: 1024}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := answerServer(t, tc.answer, true)
			tr := newTransport(t, tc.opts)
			ctx := testCtx(t)
			resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, srv.url(), nil))
			if tc.want == "" {
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
				t.Fatalf("status %d; want an error containing %q", resp.StatusCode, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
			if open, waiting := tr.OpenConns(); open != 0 || waiting != 0 {
				t.Errorf("OpenConns after the error = %d, %d; want 0, 0", open, waiting)
			}
		})
	}
}

func TestHeaderTooLarge(t *testing.T) {
	const limit = 1024
	cases := map[string]string{
		"one big field":        "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 4*limit) + "\r\n\r\n",
		"many fields":          "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-F: 0123456789\r\n", limit/4) + "\r\n",
		"informational heads":  strings.Repeat("HTTP/1.1 100 Continue\r\nX-Pad: "+strings.Repeat("p", limit/3)+"\r\n\r\n", 4) + okResponse,
		"endless status line":  "HTTP/1.1 200 " + strings.Repeat("O", 4*limit),
		"endless continuation": "HTTP/1.1 200 OK\r\nX-A: 1\r\n" + strings.Repeat(" more\r\n", limit),
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			srv := answerServer(t, answer, false)
			tr := newTransport(t, Options{MaxResponseHeaderBytes: limit})
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
}

func TestServerNeverAnswers(t *testing.T) {
	got := make(chan struct{}, 1)
	var srv *rawServer
	srv = newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		got <- struct{}{}
		<-srv.done
	})
	tr := newTransport(t, Options{})
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
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			srv := answerServer(t, answer, true)
			tr := newTransport(t, Options{})
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
}

func TestCancelDuringBodyRead(t *testing.T) {
	srv := answerServer(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n", false)
	tr := newTransport(t, Options{})
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
