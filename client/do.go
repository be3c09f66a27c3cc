package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/secret"
)

// Do sends req and fills rec with everything measured, from the send time
// (taken immediately before the request is handed to the HTTP client) to the
// end of the response. It never panics and always leaves rec complete: on
// failure rec.ErrorClass holds exactly one results.Err* class, rec.Error a
// message, and the measurements up to the failure are kept (including the
// derived audio totals, RTFs and continuity of the audio received so far).
//
// Do sets Kind, Endpoint, Model and every measured field; the caller sets
// ID, Seq, Warmup, IntendedS, SentS and LagS. A request that cannot be built
// (see Request.Validate) is recorded as results.ErrConnect with a message
// starting "request not sent". Cancelling ctx marks an in-flight request
// results.ErrCancelled.
func (c *Client) Do(ctx context.Context, req Request, rec *results.Record) {
	rec.Kind = req.Kind
	rec.Endpoint = req.path()
	rec.Model = req.Model

	rate := req.PCMSampleRate
	if rate <= 0 {
		rate = defaultPCMSampleRate
	}
	s := c.streams.Get().(*stream)
	s.reset(rec, req.Kind, "", rate, req.AudioOut)
	err := c.do(ctx, req, s)
	c.finish(s)
	if err != nil {
		rec.ErrorClass = classOf(err)
		rec.Error = c.redact(err.Error(), req)
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

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	if c.opts.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.opts.Timeout, causeTimeout)
		defer stop()
	}
	s.parent, s.ctx = parent, ctx

	tt := &traceTimes{}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tt.trace()), http.MethodPost, c.base+req.path(), bytes.NewReader(payload))
	if err != nil {
		s.t0 = time.Now()
		return fail(results.ErrConnect, "request not sent: %w", err)
	}
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

	var wd *watchdog
	s.t0 = time.Now()
	if c.opts.IdleTimeout > 0 {
		wd = startWatchdog(s.t0, c.opts.IdleTimeout, cancel)
		defer wd.stop()
	}
	tt.t0, tt.wd = s.t0, wd
	resp, err := c.http.Do(hreq)
	tt.record(s.rec)
	if err != nil {
		s.rec.E2ES = time.Since(s.t0).Seconds()
		if f := s.ctxFailure(); f != nil {
			return f
		}
		return fail(results.ErrConnect, "%w", err)
	}
	defer resp.Body.Close()
	s.rec.Status = resp.StatusCode
	s.contentType = resp.Header.Get("Content-Type")
	s.body = body{r: resp.Body, wd: wd}

	if resp.StatusCode < 200 || resp.StatusCode > 299 || strings.HasPrefix(s.contentType, "application/json") {
		msg, rerr := io.ReadAll(io.LimitReader(&s.body, maxErrorBody))
		s.rec.E2ES = time.Since(s.t0).Seconds()
		if rerr == nil {
			drain(resp.Body, cancel)
		}
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// A JSON document instead of a stream: the server ignored the
			// streaming request or reported an error with a 2xx status.
			return fail(results.ErrMalformed, "HTTP %d with Content-Type %q instead of a stream: %s", resp.StatusCode, s.contentType, errorBodyMessage(c.requestRedactor(req).Bytes(msg)))
		}
		// Redacted before errorBodyMessage clips it: a secret straddling
		// the clip would otherwise survive as a prefix.
		return fail(results.ErrHTTPStatus, "HTTP %d: %s", resp.StatusCode, errorBodyMessage(c.requestRedactor(req).Bytes(msg)))
	}

	err = s.consume(&s.body)
	s.rec.E2ES = time.Since(s.t0).Seconds()
	switch classOf(err) {
	case "", results.ErrStreamError, results.ErrMalformed:
		// The connection is healthy: read what is left (a [DONE] after an
		// error, the end of the chunked body) so it can be reused.
		drain(resp.Body, cancel)
	}
	return err
}

// drain reads what is left of a body, bounded in size and time, so that
// the transport can reuse the connection.
func drain(r io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainTimeout, func() { cancel(causeDrain) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, r, maxDrain)
}

// traceTimes collects the httptrace times of one request. It is allocated
// per request, not part of the pooled stream, because the transport may
// still call a hook of a cancelled request after Do has returned.
type traceTimes struct {
	t0        time.Time
	wd        *watchdog    // fed by the first response byte; nil without idle timeout
	connect   atomic.Int64 // new connection ready, ns after t0 (0: reused)
	firstByte atomic.Int64 // first response byte, ns after t0
}

func (tt *traceTimes) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				tt.connect.Store(int64(time.Since(tt.t0)))
			}
		},
		GotFirstResponseByte: func() {
			tt.firstByte.Store(int64(time.Since(tt.t0)))
			if tt.wd != nil {
				tt.wd.touch()
			}
		},
	}
}

// record copies the times into rec; the hooks of a request that got a
// response have all run when http.Client.Do returns.
func (tt *traceTimes) record(rec *results.Record) {
	if ns := tt.connect.Load(); ns > 0 {
		rec.ConnectS = time.Duration(ns).Seconds()
	}
	if ns := tt.firstByte.Load(); ns > 0 {
		rec.FirstByteS = time.Duration(ns).Seconds()
	}
}

// finish fills the fields derived from the chunks: audio totals, real-time
// factors and the player simulations.
func (c *Client) finish(s *stream) {
	rec := s.rec
	if !s.fmtKnown || rec.AudioBytes == 0 {
		return
	}
	frame := s.f.BytesPerFrame()
	rec.AudioFrames = rec.AudioBytes / int64(frame)
	rec.AudioDurationS = float64(rec.AudioFrames) / float64(s.f.SampleRate)
	if rec.AudioDurationS > 0 {
		rec.RTFLastChunk = rec.LastAudioS / rec.AudioDurationS
		rec.RTFE2E = rec.E2ES / rec.AudioDurationS
	}
	// RTFServer stays nil: no server reports its generation time in band.
	in := continuity.Input{
		ArrivalsS:   rec.ChunkArrivalsS,
		Bytes:       rec.ChunkBytes,
		SampleRate:  s.f.SampleRate,
		SampleWidth: s.f.BitsPerSample / 8,
		Channels:    s.f.Channels,
	}
	res := continuity.Simulate(in, c.opts.ContinuityMode)
	ok := make(map[string]bool, len(c.thresholds))
	for _, t := range c.thresholds {
		ok[continuity.ThresholdLabel(t)] = res.Continuous(t)
	}
	rec.Continuity = &results.Continuity{
		Mode:           c.opts.ContinuityMode.String(),
		MaxUnderrunS:   res.MaxUnderrunS,
		UnderrunEvents: res.UnderrunEvents,
		OK:             ok,
		Preroll:        playerResult(continuity.Preroll(in, c.opts.Preroll)),
		StallResume:    playerResult(continuity.StallResume(in)),
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

// redact removes credentials from a message that may quote the server.
func (c *Client) redact(msg string, req Request) string {
	return c.requestRedactor(req).String(msg)
}

// requestRedactor is the client's redactor plus the request's own header
// values (any header may carry a credential).
func (c *Client) requestRedactor(req Request) *secret.Redactor {
	if len(req.Headers) == 0 {
		return c.redactor
	}
	var vals []string
	for _, v := range req.Headers {
		vals = append(vals, secret.FromHeader(v)...)
	}
	return c.redactor.With(vals...)
}

// errorBodyMessage extracts the message of a non-2xx response body: the
// OpenAI {"error":{"message"}} form, vLLM's {"message"}, FastAPI's
// {"detail"}, else the text itself.
func errorBodyMessage(b []byte) string {
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
			return clip(inner.Message)
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return clip(str)
		case v.Message != "":
			return clip(v.Message)
		case json.Unmarshal(v.Detail, &str) == nil && str != "":
			return clip(str)
		case len(v.Detail) > 0:
			return clip(string(v.Detail))
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty body)"
	}
	return clip(string(b))
}

// clip makes a server-supplied message safe for one line of a record:
// control characters become spaces and it is cut to maxMessage bytes at a
// character boundary.
func clip(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
