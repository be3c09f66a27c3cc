// Package client is omnibench's streaming HTTP client for speech servers. It
// sends one request of a given kind (streaming chat with audio, speech as a
// raw byte stream, speech as SSE), reads the response as it streams and fills
// one results.Record: connection and first-byte times, time to first audio
// packet and first text, the arrival time and PCM size of every audio chunk,
// token usage, real-time factors and the player (continuity) simulations.
//
// # Timing
//
// Every offset in the Record (ConnectS, FirstByteS, TTFPS, TTFTS, chunk
// arrivals, LastAudioS, E2ES) is measured on the monotonic clock from the
// send time: the instant taken immediately before the request is handed to
// the transport (package http1, or net/http's), so it includes waiting for
// a connection, dialling and writing the request. QueueS is the part of
// that wait spent queueing for a connection: the wait for one of
// Options.MaxConns slots, plus the transport's GetConn to GotConn less the
// setup of a connection the request dialled itself; it is never silent,
// since the report shows it as a distribution. The caller (the load
// generator) sets ID, Seq, Warmup, IntendedS, SentS and LagS. A chunk's arrival is taken when the event (or,
// for the raw byte stream, the read) completed.
//
// # Performance
//
// Chat and speech SSE events are decoded by a small allocation-free JSON
// scanner (chunk.go, speechevent.go) instead of encoding/json. Once nothing
// needs a payload's samples (the audible onset is found, no --save-audio),
// a WAV or PCM payload is checked to be base64 and measured from its length
// and header instead of decoded; otherwise it is decoded into a buffer
// shared by all streams. Per-request state is pooled, an idle stream holds
// neither an event buffer (sse.BufferPool) nor an onset detector, and a
// request body without extra keys is encoded from structs, so an
// additional 80 ms audio event costs no heap allocation in steady state
// (see the benchmarks).
//
// # Failures
//
// A failed request gets exactly one results.Err* class and a message; the
// measurements taken before the failure stay in the Record. Messages never
// contain request headers, and the API key is redacted from anything the
// server echoes back.
//
// Only audio counts as audio: a 2xx body must have the kind's Content-Type
// (audio/* or application/octet-stream for raw speech, text/event-stream
// for the SSE kinds), a WAV stream's declared data size is honoured, an SSE
// line or event beyond Options.MaxEventBytes is refused, and JSON is as
// strict as encoding/json; anything else is results.ErrMalformed (or
// results.ErrTruncated for WAV data shorter than declared). Redirects are
// not followed but recorded as results.ErrHTTPStatus with the Location, and
// a response that is not HTTP at all, or a body whose chunked framing is
// bad, is malformed.
//
// # End of a response
//
// A response ends at its end marker ([DONE], speech.audio.done, an error
// event): e2e is taken there and Do returns. What the server still sends is
// drained in the background (at most 256 KiB for 2 s) so the connection can
// be reused; a server that holds the connection open holds neither the
// caller, nor the measurement, nor a connection slot the next request would
// wait for (see connSlots). Close and WaitDrains end or await the drains.
//
// A request that fails on the client machine's own limit (out of file
// descriptors or local ports) is results.ErrClientLimit, not a connect
// failure: the message names the limit and how to raise it.
package client

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/audio/onset"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/sse"
)

// Options configures a Client. The zero value of every field has a usable
// default except BaseURL.
type Options struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8000. A trailing
	// "/v1" is accepted too (as OpenAI SDKs expect it) and not repeated.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty. It
	// never appears in a Record, an error or a log.
	APIKey string
	// Timeout bounds a whole request (connect to last byte); 0 means none.
	Timeout time.Duration
	// IdleTimeout fails a request when no byte arrived for this long,
	// counted from the send time (so it also bounds the wait for the
	// response headers); 0 means no idle watchdog.
	IdleTimeout time.Duration
	// Thresholds are the continuity thresholds in seconds; default [0.1].
	Thresholds []float64
	// ContinuityMode selects the underrun simulation (continuity.Default
	// or continuity.Reference).
	ContinuityMode continuity.Mode
	// Preroll configures the pre-buffering player simulation.
	Preroll continuity.PrerollConfig
	// MaxConns bounds the requests in flight, each on a connection of its
	// own; 0 means no bound, so connections follow the load. The runner
	// sets it to the load's peak concurrency (load.Config.PeakConcurrency).
	// A request that waits because of the bound has the wait in
	// results.Record.QueueS. The background drain of a finished response
	// does not count (see connSlots): the connections are at most twice
	// MaxConns.
	MaxConns int
	// Redact holds the credentials the user gave (see package secret); the
	// client adds APIKey, the base URL's userinfo and each request's header
	// values, and applies it to a server's error body before it is clipped
	// into Record.Error.
	Redact *secret.Redactor
	// MaxEventBytes caps one SSE line and one event's data (chat and
	// speech SSE); default sse.DefaultMaxEventBytes (16 MiB). A response
	// with a larger line or event fails as results.ErrMalformed with the
	// size seen, instead of being buffered whole.
	MaxEventBytes int
	// AudibleThresholdDBFS and AudibleWindow define audible audio for
	// Record.TTFAAudibleS (package onset); 0 means onset.DefaultThresholdDBFS
	// (-50 dBFS) and onset.DefaultWindow (10 ms).
	AudibleThresholdDBFS float64
	AudibleWindow        time.Duration
	// AudioChecks runs the signal checks of package audiocheck over every
	// response's decoded audio and fills Record.Audio. It keeps decoding a
	// response's audio after its onset is found (otherwise the rest is
	// measured from lengths), which costs CPU per event: see
	// docs/performance.md. The gate is AudibleThresholdDBFS.
	AudioChecks bool
	// TLSConfig is used for https (package tlsconf: --ca-file, --insecure);
	// nil verifies the server's certificate against the system's roots.
	TLSConfig *tls.Config
	// HTTPTransport selects the transport: TransportOwn (package http1,
	// the default when "") or TransportStd (net/http's). Both are HTTP/1.1
	// with the same settings, and the client measures the same through
	// either.
	HTTPTransport string
}

// Client sends streaming requests. It is safe for concurrent use; all
// requests share one HTTP/1.1 transport (package http1, or net/http's when
// Options.HTTPTransport says so): one stream per connection, as real
// servers are benchmarked, no compression.
type Client struct {
	opts       Options
	base       string // scheme://host[:port][/prefix], without a trailing "/v1" or "/"
	thresholds []float64
	transport  roundTripper // no timeout of its own: requests are bounded by their contexts
	streams    sync.Pool    // *stream, so per-request buffers are reused
	// decodeBufs holds the buffers audio payloads are decoded into
	// (*[]byte). A payload's samples are needed only while its event is
	// handled, so the buffers are shared by all streams: about as many as
	// events handled at once, not one (5 KB) per open stream.
	decodeBufs sync.Pool
	// sseBufs lends the event-stream readers their 8 KiB buffers while
	// they have unread bytes (sse.BufferPool): an open stream waits for
	// its next event without one.
	sseBufs sse.BufferPool
	// basicAuth is the Authorization value from the base URL's user
	// information, sent when no API key or header sets one (as
	// http.Client does); "" without user information.
	basicAuth string
	// detectors holds the audible-onset detectors (*onset.Detector) of
	// streams that have not found their onset yet (Onset.pool).
	detectors sync.Pool
	redactor  *secret.Redactor

	drainTimeout time.Duration // bound of a background drain (tests raise it)
	drains       sync.WaitGroup
	slots        *connSlots      // Options.MaxConns: requests in flight, and the drains
	closing      context.Context // cancelled by Close: ends the background drains
	closed       context.CancelFunc
}

// New validates opts and builds a Client.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil {
		// url.Error would quote the URL, which may hold credentials.
		return nil, fmt.Errorf("client: base URL is not a valid URL: %w", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Opaque != "" {
			// "user:pw@host" parses as the scheme "user" and opaque data,
			// which Redacted would show as it is.
			return nil, fmt.Errorf("client: base URL scheme %q must be http or https (a URL starts with http:// or https://)", u.Scheme)
		}
		return nil, fmt.Errorf("client: base URL %s: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: base URL %s has no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %s must not have a query or fragment", u.Redacted())
	}
	if opts.Timeout < 0 || opts.IdleTimeout < 0 {
		return nil, fmt.Errorf("client: negative timeout (timeout %v, idle timeout %v)", opts.Timeout, opts.IdleTimeout)
	}
	if opts.MaxEventBytes < 0 {
		return nil, fmt.Errorf("client: max event bytes is %d, must be >= 0", opts.MaxEventBytes)
	}
	if opts.MaxEventBytes == 0 {
		opts.MaxEventBytes = sse.DefaultMaxEventBytes
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("client: max connections is %d, must be >= 0", opts.MaxConns)
	}
	if opts.Preroll.BufferS < 0 || opts.Preroll.MaxWaitS < 0 || math.IsNaN(opts.Preroll.BufferS) || math.IsNaN(opts.Preroll.MaxWaitS) {
		return nil, fmt.Errorf("client: pre-roll buffer %v s and max wait %v s must be >= 0", opts.Preroll.BufferS, opts.Preroll.MaxWaitS)
	}
	thresholds := append([]float64(nil), opts.Thresholds...)
	if len(thresholds) == 0 {
		thresholds = []float64{0.1}
	}
	for _, t := range thresholds {
		if !(t > 0) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("client: continuity threshold %v s must be a positive number", t)
		}
	}
	if opts.AudibleThresholdDBFS == 0 {
		opts.AudibleThresholdDBFS = onset.DefaultThresholdDBFS
	}
	if opts.AudibleWindow == 0 {
		opts.AudibleWindow = onset.DefaultWindow
	}
	// Validate the onset settings once, at a typical format.
	if _, err := onset.New(onset.Config{SampleRate: 24000, Channels: 1, ThresholdDBFS: opts.AudibleThresholdDBFS,
		Window: opts.AudibleWindow}); err != nil {
		return nil, fmt.Errorf("client: audible threshold: %w", err)
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")

	// The proxy environment is read now, as the redactor reads the
	// proxy credentials below, not once per process as net/http's
	// ProxyFromEnvironment caches it.
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	tr, err := newTransport(opts.HTTPTransport,
		func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }, opts.TLSConfig)
	if err != nil {
		return nil, err
	}
	c := &Client{
		opts:         opts,
		base:         base,
		thresholds:   thresholds,
		transport:    tr,
		drainTimeout: drainTimeout,
		slots:        newConnSlots(opts.MaxConns),
		redactor: opts.Redact.With(append(append(secret.FromURL(opts.BaseURL), opts.APIKey),
			secret.FromEnvironment(os.Getenv)...)...),
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		c.basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	c.closing, c.closed = context.WithCancel(context.Background())
	c.streams.New = func() any {
		return &stream{owner: c, decodeBufs: &c.decodeBufs, sseBufs: &c.sseBufs, onset: Onset{pool: &c.detectors}}
	}
	c.decodeBufs.New = func() any { return new([]byte) }
	return c, nil
}

// WaitDrains waits until the background drains of finished responses have
// ended (each within 2 s), so that the server has seen every response
// through before its metrics are read. When ctx is done first it ends them,
// as Close does. Call it when no request is in flight.
func (c *Client) WaitDrains(ctx context.Context) {
	stop := context.AfterFunc(ctx, c.closed)
	defer stop()
	c.drains.Wait()
}

// Close ends the background drains of finished responses (their
// connections are closed instead of reused) and waits for them, then closes
// idle connections. Requests in flight are not affected.
func (c *Client) Close() {
	c.closed()
	c.drains.Wait()
	c.transport.CloseIdleConnections()
}
