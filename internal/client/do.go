package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/sse"
)

// Do sends req and fills rec with everything measured, from the send time
// (taken immediately before the request is handed to the transport) to the
// end of the response. It never panics and always leaves rec complete: on
// failure rec.ErrorClass holds exactly one results.Err* class, rec.Error a
// message, and the measurements up to the failure are kept (including the
// derived audio totals, RTFs and continuity of the audio received so far).
//
// Do sets Kind, Endpoint, Model and every measured field; the caller sets
// ID, Seq, Warmup, IntendedS, SentS and LagS. A request that cannot be built
// (see Request.Validate) is recorded as results.ErrConnect with a message
// starting "request not sent". Cancelling ctx marks an in-flight request
// results.ErrCancelled. A response that ended normally but carried no audio
// sample although the request asked for audio (Request.asksForAudio) is
// results.ErrNoAudio: an audio event without samples is legitimate (a
// server's first one may be empty), a response made only of such events,
// or of text, is not.
func (c *Client) Do(ctx context.Context, req Request, rec *results.Record) {
	rec.Kind = req.Kind
	rec.Endpoint = req.path()
	rec.Model = req.Model
	rec.InputAudioS, rec.InputAudioBytes = req.inputAudio()

	rate := req.PCMSampleRate
	if rate <= 0 {
		rate = defaultPCMSampleRate
	}
	s := c.streams.Get().(*stream)
	s.reset(rec, req.Kind, "", rate, req.AudioOut, c.opts.MaxEventBytes)
	s.headers, s.textOut = req.Headers, req.TextOut
	s.audibleDB, s.audibleWindow = c.opts.AudibleThresholdDBFS, c.opts.AudibleWindow
	s.audioChecks = c.opts.AudioChecks
	err := c.do(ctx, req, s)
	c.finish(s)
	if err == nil && !rec.HasAudio() && req.asksForAudio() {
		err = s.noAudio()
	}
	if err != nil {
		rec.ErrorClass = classOf(err)
		rec.Error = s.redactor().String(err.Error())
	}
	s.release()
	c.streams.Put(s)
}

// do runs the request; it returns nil or a *failure.
func (c *Client) do(parent context.Context, req Request, s *stream) error {
	payload, format, err := req.build()
	if err != nil {
		s.t0 = time.Now()
		return fail(results.ErrConnect, "request not sent: %w", err)
	}
	s.format = format

	// The request's context is not derived from parent's cancellation but
	// linked to it, so that endBody can cut the link when it hands the body
	// to a background drain: callers cancel a finished request's context
	// (the load generator does), which must not end the drain.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	unlink := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
	stop := func() {}
	if c.opts.Timeout > 0 {
		// A timer that cancels ctx with the cause, rather than a context
		// with a deadline on top of it: every open stream holds its
		// contexts, and the transport's cancellation watch then
		// hangs off ctx instead of a third one.
		timer := time.AfterFunc(c.opts.Timeout, func() { cancel(causeTimeout) })
		stop = func() { timer.Stop() }
	}
	// The contexts end with the request, or with the background drain of
	// its body when endBody hands the body over.
	release := func() {
		unlink()
		stop()
		cancel(nil)
	}
	handedOff := false
	defer func() {
		if !handedOff {
			release()
		}
	}()
	s.parent, s.ctx = parent, ctx

	tt := &traceTimes{}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tt.trace()), http.MethodPost, c.base+req.path(), bytes.NewReader(payload))
	if err != nil {
		s.t0 = time.Now()
		return fail(results.ErrConnect, "request not sent: %w", err)
	}
	hreq.Header.Set("User-Agent", userAgent)
	hreq.Header.Set("Content-Type", "application/json")
	if req.Kind != results.KindSpeech {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range req.Headers {
		if strings.EqualFold(k, "Host") {
			hreq.Host = v // net/http ignores a Host header field
			continue
		}
		hreq.Header.Set(k, v)
	}
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	if c.basicAuth != "" && hreq.Header.Get("Authorization") == "" {
		hreq.Header.Set("Authorization", c.basicAuth)
	}

	var idle idleWatch
	s.t0 = time.Now()
	if c.opts.IdleTimeout > 0 {
		idle = startIdleWatch(s.t0, c.opts.IdleTimeout, cancel)
		defer idle.stop()
	}
	tt.t0, tt.idle = s.t0, idle
	if err := c.slots.acquire(ctx); err != nil {
		s.rec.QueueS = time.Since(s.t0).Seconds()
		s.rec.E2ES = s.rec.QueueS
		if f := s.ctxFailure(); f != nil {
			return f
		}
		return fail(results.ErrCancelled, "waiting for a connection: %w", err)
	}
	queued := time.Since(s.t0)
	resp, err := c.transport.RoundTrip(hreq)
	tt.record(s.rec)
	s.rec.QueueS += queued.Seconds()
	if err != nil {
		c.slots.release()
		s.rec.E2ES = time.Since(s.t0).Seconds()
		return s.roundTripFailure(hreq, tt.firstByte.Load() > 0, err)
	}
	s.rec.Status = resp.StatusCode
	s.contentType = resp.Header.Get("Content-Type")
	s.rec.ServerTokens = tokenHeaders(resp.Header)
	s.body = body{r: resp.Body, idle: idle}
	reuse, err := s.readResponse(resp)
	s.rec.E2ES = time.Since(s.t0).Seconds()
	handedOff = c.endBody(resp.Body, s.body.eof, reuse, unlink, cancel, release)
	return err
}

// roundTripFailure classifies a request that got no response head: err is
// the transport's, gotByte says whether a byte of a response came.
func (s *stream) roundTripFailure(hreq *http.Request, gotByte bool, err error) error {
	if f := s.ctxFailure(); f != nil {
		if classOf(f) == results.ErrIdleTimeout && gotByte {
			// Bytes came, but the head they began did not end: the
			// watchdog sees a head as one read, from its first byte to
			// its end.
			return fail(results.ErrIdleTimeout, "the response head was still incomplete for the idle timeout after its first byte (at %.3f s)", s.rec.FirstByteS)
		}
		return f
	}
	if f := clientLimit(err); f != nil {
		return f
	}
	if gotByte {
		// The server answered, but not with HTTP: a garbage status line
		// or header block. The transport quotes what came, which may be
		// long, so the message is clipped.
		return fail(results.ErrMalformed, "the response is not HTTP/1.x: %s", clip(s.redactor(), err.Error()))
	}
	// The URL as every output shows one (secret.URL): without its user
	// information, a user name may be a token as well as a password
	// (net/http's message kept the name).
	return fail(results.ErrConnect, "%s %s: %w", hreq.Method, secret.URL(hreq.URL.String()), err)
}

// readResponse reads the response to its end marker (or to the failure)
// and reports whether the connection is still sound, so that what is left
// of the body is worth draining for reuse. Server text quoted in the error
// (a body, a Content-Type, a Location) has the credentials masked before it
// is clipped (secret.Redactor.Clip): a secret straddling the clip would
// otherwise survive as a prefix.
//
// A redirect is a failure, not followed: one followed silently would
// measure another server under the original name, turn the POST into a GET
// (302) or carry the credentials to another host (307).
func (s *stream) readResponse(resp *http.Response) (reuse bool, err error) {
	if isRedirect(resp.StatusCode) {
		loc := "no Location"
		if l := resp.Header.Get("Location"); l != "" {
			loc = "Location " + clip(s.redactor(), secret.URL(l))
		}
		return true, fail(results.ErrHTTPStatus, "HTTP %d redirect (%s), not followed: the benchmark measures the server it was given", resp.StatusCode, loc)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || strings.HasPrefix(s.contentType, "application/json") {
		msg, rerr := io.ReadAll(io.LimitReader(&s.body, maxErrorBody))
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// A JSON document instead of a stream: the server ignored the
			// streaming request or reported an error with a 2xx status.
			return rerr == nil, fail(results.ErrMalformed, "HTTP %d with Content-Type %q instead of a stream: %s", resp.StatusCode, s.contentType, errorBodyMessage(s.redactor(), msg))
		}
		return rerr == nil, fail(results.ErrHTTPStatus, "HTTP %d: %s", resp.StatusCode, errorBodyMessage(s.redactor(), msg))
	}
	if got, want := unexpectedType(s.redactor, s.kind, s.contentType); got != "" {
		// A login page, a proxy's error page or the wrong stream: nothing
		// in it is audio. Its start goes into the message, so the run's
		// error set shows what came.
		head, rerr := io.ReadAll(io.LimitReader(&s.body, maxErrorBody))
		return rerr == nil, fail(results.ErrMalformed, "HTTP %d with %s instead of %s: %s", resp.StatusCode, got, want, bodyStart(s.redactor(), head))
	}
	err = s.consume(&s.body)
	var limit *sse.LimitError
	switch classOf(err) {
	case "", results.ErrStreamError:
		// The response ended at its marker, or with an error event: what
		// is left (a [DONE] after an error, the end of the chunked body)
		// is short, and the connection can be reused.
		return true, err
	case results.ErrMalformed:
		// A bad payload inside sound framing, unless a line or event
		// overran the cap: then the rest is more of the same.
		return !errors.As(err, &limit), err
	}
	return false, err
}

// isRedirect reports whether status sends the client elsewhere: the codes
// an HTTP client follows (net/http's http.Client follows these five). A 304
// (Not Modified) answers a conditional request and a 300 offers choices:
// neither names where to go, so they are reported as other statuses are.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// endBody ends a response body whose request was measured. A body already
// at its end, or not worth reusing, is closed at once (a connection not at
// the end of its body is closed, not reused), and release ends the request's
// contexts. Otherwise the rest is drained in the background, bounded in size
// (maxDrain) and time (drainTimeout), so that a server that keeps the
// connection open after the end marker holds neither the caller nor its
// measurement; the drain then closes the body and calls release. It reports
// whether it handed the body over. The drain is cut from the caller's
// context (unlink); Close and WaitDrains end it early, and so does a
// drain beyond the client's bound on drains (connSlots).
func (c *Client) endBody(b io.ReadCloser, atEOF, reuse bool, unlink func() bool, cancel context.CancelCauseFunc, release func()) bool {
	if atEOF || !reuse {
		b.Close() // first: a connection given back is there for the next request
		c.slots.release()
		release()
		return false
	}
	c.slots.release() // the measurement has ended: a drain holds no slot
	unlink()
	c.drains.Add(1)
	ended := c.slots.drain(cancel)
	go func() {
		defer c.drains.Done()
		defer ended()
		// Close ends a drain at once: the connection is not reused then.
		stopOnClose := context.AfterFunc(c.closing, func() { cancel(causeDrain) })
		t := time.AfterFunc(c.drainTimeout, func() { cancel(causeDrain) })
		_, _ = io.CopyN(io.Discard, b, maxDrain)
		t.Stop()
		stopOnClose()
		b.Close()
		release()
	}()
	return true
}

// traceTimes collects the httptrace times of one request. It is allocated
// per request, not part of the pooled stream, because the transport may
// still call a hook of a cancelled request after Do has returned.
type traceTimes struct {
	t0        time.Time
	idle      idleWatch    // fed by the first response byte; zero without an idle timeout
	connect   atomic.Int64 // new connection ready, ns after t0 (0: reused)
	firstByte atomic.Int64 // first response byte, ns after t0

	// The connection wait: GetConn to GotConn, less the time this
	// request spent setting up a new connection itself (DNS, TCP, TLS),
	// is the time it queued for one (Options.MaxConns reached). All in ns
	// after t0; dialStart and dialEnd are the first setup start and the
	// last setup end (happy eyeballs may dial twice).
	getConn, gotConn   atomic.Int64
	dialStart, dialEnd atomic.Int64
	reused             atomic.Bool
}

// since is the time since t0 in ns, at least 1 so that 0 means "not seen".
func (tt *traceTimes) since() int64 { return max(int64(time.Since(tt.t0)), 1) }

// setupStart and setupEnd record a DNS, TCP or TLS step of a new connection.
func (tt *traceTimes) setupStart() { tt.dialStart.CompareAndSwap(0, tt.since()) }
func (tt *traceTimes) setupEnd()   { tt.dialEnd.Store(tt.since()) }

func (tt *traceTimes) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:           func(string) { tt.getConn.CompareAndSwap(0, tt.since()) },
		DNSStart:          func(httptrace.DNSStartInfo) { tt.setupStart() },
		DNSDone:           func(httptrace.DNSDoneInfo) { tt.setupEnd() },
		ConnectStart:      func(string, string) { tt.setupStart() },
		ConnectDone:       func(string, string, error) { tt.setupEnd() },
		TLSHandshakeStart: func() { tt.setupStart() },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { tt.setupEnd() },
		GotConn: func(info httptrace.GotConnInfo) {
			tt.reused.Store(info.Reused)
			tt.gotConn.CompareAndSwap(0, tt.since())
			if !info.Reused {
				tt.connect.Store(int64(time.Since(tt.t0)))
			}
		},
		GotFirstResponseByte: func() {
			tt.firstByte.Store(int64(time.Since(tt.t0)))
			tt.idle.touch()
		},
	}
}

// record copies the times into rec; the hooks of a request that got a
// response have all run when the transport's RoundTrip returns.
func (tt *traceTimes) record(rec *results.Record) {
	if ns := tt.connect.Load(); ns > 0 {
		rec.ConnectS = time.Duration(ns).Seconds()
	}
	if ns := tt.firstByte.Load(); ns > 0 {
		rec.FirstByteS = time.Duration(ns).Seconds()
	}
	rec.QueueS = tt.queue().Seconds()
}

// queue is the time the request waited for a connection it did not set up
// itself: the whole GetConn-to-GotConn wait for a reused (or handed-over)
// connection, the wait less its own setup for a new one. When the request
// never got a connection (it failed or was cancelled while waiting), the
// wait runs to now.
func (tt *traceTimes) queue() time.Duration {
	get := tt.getConn.Load()
	if get == 0 {
		return 0
	}
	got := tt.gotConn.Load()
	if got == 0 {
		got = tt.since()
	}
	wait := got - get
	if !tt.reused.Load() {
		if s, e := tt.dialStart.Load(), tt.dialEnd.Load(); s > 0 && e > s {
			wait -= min(e, got) - s
		}
	}
	return time.Duration(max(wait, 0))
}

// finish fills the fields derived from the chunks: audio totals, real-time
// factors and the player simulations.
func (c *Client) finish(s *stream) {
	if s.fmtKnown {
		if s.rec.AudioBytes > 0 {
			s.onset.Finish(s.rec)
		}
		c.FinishAudio(s.rec, s.f)
	}
}

func playerResult(p continuity.PlayerResult) *results.PlayerResult {
	return &results.PlayerResult{
		StartupDelayS: p.StartupDelayS,
		Stalls:        p.Stalls,
		TotalStallS:   p.TotalStallS,
		LongestStallS: p.LongestStallS,
	}
}

// RedactorFor is the client's redactor (Options.Redact, the API key, the
// base URL's and the environment's proxy credentials) plus the values of
// a request's own headers (any header may carry a credential). Everything
// the client or the WebSocket client quotes from a server goes through it.
func (c *Client) RedactorFor(headers map[string]string) *secret.Redactor {
	if len(headers) == 0 {
		return c.redactor
	}
	var vals []string
	for _, v := range headers {
		vals = append(vals, secret.FromHeader(v)...)
	}
	return c.redactor.With(vals...)
}

// errorBodyMessage extracts the message of a non-2xx response body: the
// OpenAI {"error":{"message"}} form, vLLM's {"message"}, FastAPI's
// {"detail"}, else the text itself.
func errorBodyMessage(red *secret.Redactor, b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return clip(red, inner.Message)
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return clip(red, str)
		case v.Message != "":
			return clip(red, v.Message)
		case json.Unmarshal(v.Detail, &str) == nil && str != "":
			return clip(red, str)
		case len(v.Detail) > 0:
			return clip(red, string(v.Detail))
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty body)"
	}
	return clip(red, string(b))
}

// unexpectedType checks a 2xx response's Content-Type against what the
// request kind streams: raw speech is audio (audio/*, including audio/pcm
// and audio/wav, or application/octet-stream), chat and speech SSE are
// text/event-stream. It returns "" when the type fits, else a description of
// what came and of what was expected.
func unexpectedType(redactor func() *secret.Redactor, kind, contentType string) (got, want string) {
	mt, _, err := mime.ParseMediaType(contentType)
	if kind == results.KindSpeech {
		want = "audio (audio/*, application/octet-stream)"
		if err == nil && (strings.HasPrefix(mt, "audio/") || mt == "application/octet-stream") {
			return "", ""
		}
	} else {
		want = "an event stream (text/event-stream)"
		if err == nil && mt == "text/event-stream" {
			return "", ""
		}
	}
	switch {
	case contentType == "":
		return "no Content-Type", want
	case err != nil:
		return fmt.Sprintf("an unparsable Content-Type %q", clip(redactor(), contentType)), want
	case mt == "text/html" || mt == "application/xhtml+xml":
		return fmt.Sprintf("an HTML page (Content-Type %q)", clip(redactor(), contentType)), want
	case mt == "text/event-stream":
		return fmt.Sprintf("an SSE body (Content-Type %q)", clip(redactor(), contentType)), want
	}
	return fmt.Sprintf("Content-Type %q", clip(redactor(), contentType)), want
}

// bodyStart renders the start of an unexpected body for a message: runs of
// white space (an HTML page's indentation) are collapsed, then clipped.
func bodyStart(red *secret.Redactor, b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty body)"
	}
	return clip(red, strings.Join(strings.Fields(string(b)), " "))
}

// clip makes a server-supplied message safe for one line of a record:
// control characters become spaces, the credentials red knows (and any
// authentication token) are masked, and it is cut to maxMessage bytes at a
// character boundary, with whatever the cut leaves of a credential masked
// too (secret.Redactor.Clip).
func clip(red *secret.Redactor, s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
	return red.Clip(s, maxMessage)
}
