package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// proxyRequests is how many streamed responses of each kind go through the
// proxy. Every one of them meets the late body check (lateEOFBody), so a
// few would do; more give a simulator-side cut, should one appear, a chance
// to show.
const proxyRequests = 50

// maxProxiedBody caps a response body read through the proxy; the test's
// responses carry 0.1 s of audio, some 10 KiB.
const maxProxiedBody = 1 << 20

// proxyLog collects what the reverse proxy reports: its ErrorLog lines and
// the errors of writing requests upstream (httptrace WroteRequest). Capped:
// the first lines say enough.
type proxyLog struct {
	mu    sync.Mutex
	lines []string
}

const proxyLogCap = 20

func (l *proxyLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < proxyLogCap {
		l.lines = append(l.lines, strings.TrimRight(line, "\n"))
	}
}

func (l *proxyLog) Write(p []byte) (int, error) {
	l.add(string(p))
	return len(p), nil
}

func (l *proxyLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return "(nothing)"
	}
	return strings.Join(l.lines, "\n")
}

// requestIDHeader tags each test request so that the proxy can find the
// signal of its response reaching the client.
const requestIDHeader = "X-Omnibench-Test-Request"

// firstBytes holds, per test request, a channel closed when the client has
// read the first byte of the response (httptrace GotFirstResponseByte).
type firstBytes struct{ m sync.Map } // request id -> chan struct{}

func (f *firstBytes) channel(id string) chan struct{} {
	ch, _ := f.m.LoadOrStore(id, make(chan struct{}))
	return ch.(chan struct{})
}

// lateEOFBody passes the request body's bytes to the proxy's Transport as
// they come, but holds the Transport's read after the last byte (the check
// that the body is no longer than its Content-Length) until the response
// has reached the client. That is the order the proxy gets by chance when
// its Transport's write loop is descheduled just after sending the body,
// made certain.
type lateEOFBody struct {
	io.ReadCloser
	left    int64           // bytes before the check
	reached <-chan struct{} // closed when the client has the first response byte
	ctx     context.Context // bounds the hold
}

func (b *lateEOFBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		select {
		case <-b.reached:
		case <-b.ctx.Done():
		}
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// startReverseProxy puts a net/http/httputil.ReverseProxy on 127.0.0.1 in
// front of target, flushing every write (FlushInterval -1) as proxies in
// front of streaming servers are configured, with every request body's
// Content-Length check held until the response has reached the client
// (lateEOFBody, signalled through seen).
//
// The proxy's handler enables full duplex, as any Go reverse proxy in front
// of a server that answers as soon as it has read the request body must:
// Go's HTTP/1 server drains and closes the inbound request body when the
// response headers go out ((*chunkWriter).writeHeader), while the proxy's
// Transport reads that same body once more after sending its Content-Length
// bytes (transferWriter.writeBody). When the server's headers come back
// first, that read fails with "invalid Read on closed Body" and
// persistConn.writeLoop closes the upstream connection under the response
// being copied: the client gets a cut body and the proxy logs "read error
// during body copy: ... use of closed network connection" (golang/go#40747).
// Without the hold, 0.03 to 3 % of streamed responses were cut, by load;
// with it and without full duplex, all of them.
func startReverseProxy(t *testing.T, target string, seen *firstBytes) (string, *proxyLog) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parse %q: %v", target, err)
	}
	plog := &proxyLog{}
	upstream := &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}
	t.Cleanup(upstream.CloseIdleConnections)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport:     upstream,
		FlushInterval: -1,
		ErrorLog:      log.New(plog, "proxy: ", 0),
	}
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err != nil {
			plog.add("proxy: writing the request upstream: " + i.Err.Error())
		}
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			plog.add("proxy: EnableFullDuplex: " + err.Error())
		}
		out := r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
		if id := r.Header.Get(requestIDHeader); id != "" && r.ContentLength > 0 {
			// The hold waits for the client's first byte, which comes in
			// milliseconds; the bound only keeps a broken run from hanging.
			hold, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			out.Body = &lateEOFBody{ReadCloser: r.Body, left: r.ContentLength, reached: seen.channel(id), ctx: hold}
		}
		rp.ServeHTTP(w, out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, plog
}

// TestStreamsCompleteBehindReverseProxy sends streamed chat and speech
// requests, one at a time, through a reverse proxy to the server Start
// runs (its listener, cork and timeouts included) and checks that every
// response arrived whole: a clean end of the chunked body and the stream's
// last event ([DONE], speech.audio.done) or all of the raw audio.
func TestStreamsCompleteBehindReverseProxy(t *testing.T) {
	run := startSim(t, testConfig())
	var seen firstBytes
	proxyURL, plog := startReverseProxy(t, run.URL, &seen)
	client := &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	const prompt = "Hi" // one word and one 0.1 s audio chunk: each request takes milliseconds
	cases := []struct {
		name     string
		path     string
		body     any
		complete func(body []byte) error // says what a whole response of its kind lacks
	}{
		{"chat SSE", "/v1/chat/completions", chatReq(prompt, nil), func(b []byte) error {
			return lastEvent(b, func(ev sseEvent) bool { return string(ev.data) == "[DONE]" })
		}},
		{"speech SSE", "/v1/audio/speech", speechReq(prompt, map[string]any{"stream": true}), func(b []byte) error {
			return lastEvent(b, func(ev sseEvent) bool { return ev.typ == "speech.audio.done" })
		}},
		{"speech raw stream", "/v1/audio/speech",
			speechReq(prompt, map[string]any{"stream_format": "audio", "response_format": "wav"}), func(b []byte) error {
				_, pcm, err := wav.Decode(b)
				if err != nil {
					return err
				}
				if want := 2 * 2400; len(pcm) != want { // 0.1 s at 24 kHz, s16
					return fmt.Errorf("%d bytes of PCM, want %d", len(pcm), want)
				}
				return nil
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			var cut []string
			for i := range proxyRequests {
				id := fmt.Sprintf("%s/%d", tc.name, i)
				if err := proxyRoundTrip(ctx, client, proxyURL+tc.path, id, seen.channel(id), body, tc.complete); err != nil {
					cut = append(cut, fmt.Sprintf("request %d: %v", i, err))
				}
				if ctx.Err() != nil {
					t.Fatalf("deadline after %d requests: %v", i+1, ctx.Err())
				}
			}
			if len(cut) > 0 {
				t.Errorf("%d of %d responses cut through the proxy; first: %s\nproxy log:\n%s",
					len(cut), proxyRequests, cut[0], plog)
			}
		})
	}
}

// proxyRoundTrip posts body to url as request id, closes firstByte when
// the response's first byte arrives and reads the whole response; an error
// says how the response was not complete.
func proxyRoundTrip(ctx context.Context, tr http.RoundTripper, url, id string, firstByte chan struct{},
	body []byte, complete func([]byte) error) error {
	var once sync.Once
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotFirstResponseByte: func() { once.Do(func() { close(firstByte) }) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(requestIDHeader, id)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxProxiedBody+1))
	if err != nil {
		return fmt.Errorf("status %d, reading the body after %d bytes: %w", resp.StatusCode, len(b), err)
	}
	if len(b) > maxProxiedBody {
		return fmt.Errorf("status %d: body over the test's %d-byte cap", resp.StatusCode, maxProxiedBody)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	if err := complete(b); err != nil {
		return fmt.Errorf("%d bytes, incomplete: %w", len(b), err)
	}
	return nil
}

// lastEvent checks that an SSE body parses and that is accepts its last
// event.
func lastEvent(body []byte, is func(sseEvent) bool) error {
	evs, err := readEvents(bytes.NewReader(body))
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return errors.New("no events")
	}
	if last := evs[len(evs)-1]; !is(last) {
		return fmt.Errorf("last event is %q %.80q", last.typ, last.data)
	}
	return nil
}
