package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"

	"github.com/omnibench/omnibench/internal/secret"
)

// Accept selects the exposition format asked for.
type Accept int

// Accept values. AcceptAuto asks like a Prometheus server: protobuf first,
// then OpenMetrics, then text. The others ask for one format only; the
// response is decoded by what the server actually sends either way.
const (
	AcceptAuto Accept = iota
	AcceptProto
	AcceptOpenMetrics
	AcceptText
)

// ParseAccept reads "auto", "proto", "openmetrics" or "text".
func ParseAccept(s string) (Accept, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return AcceptAuto, nil
	case "proto", "protobuf":
		return AcceptProto, nil
	case "openmetrics", "om":
		return AcceptOpenMetrics, nil
	case "text":
		return AcceptText, nil
	}
	return AcceptAuto, fmt.Errorf("unknown exposition format %q (want auto, proto, openmetrics or text)", s)
}

func (a Accept) String() string {
	switch a {
	case AcceptProto:
		return "proto"
	case AcceptOpenMetrics:
		return "openmetrics"
	case AcceptText:
		return "text"
	}
	return "auto"
}

const (
	acceptOpenMetrics = "application/openmetrics-text;version=1.0.0"
	acceptText        = "text/plain;version=0.0.4"
)

// Header is the Accept header value sent for a.
func (a Accept) Header() string {
	switch a {
	case AcceptProto:
		return string(expfmt.FmtProtoDelim)
	case AcceptOpenMetrics:
		return acceptOpenMetrics
	case AcceptText:
		return acceptText
	}
	return string(expfmt.FmtProtoDelim) + ";q=0.7," + acceptOpenMetrics + ";q=0.5," + acceptText + ";q=0.3,*/*;q=0.1"
}

// MaxBodyBytes bounds what a scrape reads from one /metrics response unless
// Options.MaxBytes says otherwise. Real servers expose a few hundred
// kilobytes; anything near this is not metrics.
const MaxBodyBytes = 64 << 20

// DefaultTimeout bounds one scrape (connect to last byte) unless
// Options.Timeout says otherwise: a server that accepts the connection and
// never answers must not hang the command.
const DefaultTimeout = 10 * time.Second

// Options bound one scrape. The zero value asks with AcceptAuto, through
// http.DefaultClient, within DefaultTimeout, reading at most MaxBodyBytes and
// accepting at most DefaultMaxSamples samples.
type Options struct {
	Accept Accept
	// Redact holds the credentials to keep out of errors and snapshots
	// (package secret); the URL's own user information is added to it.
	Redact     *secret.Redactor
	Client     *http.Client  // nil: http.DefaultClient
	Timeout    time.Duration // whole scrape; 0: DefaultTimeout
	MaxBytes   int64         // exposition bytes read; 0: MaxBodyBytes
	MaxSamples int           // samples (exposition lines with a value) accepted; 0: DefaultMaxSamples
	// Uncompressed asks for the body as is (Accept-Encoding: identity)
	// instead of letting the server gzip it: over loopback or a fast
	// network, compressing a large exposition costs the server under test
	// (and decompressing it the client) more than the bytes it saves.
	Uncompressed bool
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return MaxBodyBytes
}

func (o Options) maxSamples() int {
	if o.MaxSamples > 0 {
		return o.MaxSamples
	}
	return DefaultMaxSamples
}

// Fetch scrapes url once with the default bounds (see Options.Fetch).
func Fetch(ctx context.Context, url string, accept Accept) (*Snapshot, error) {
	return Options{Accept: accept}.Fetch(ctx, url)
}

// FetchSettled is Options.FetchSettled with the default bounds.
func FetchSettled(ctx context.Context, url string, accept Accept, settle time.Duration) (*Snapshot, error) {
	return Options{Accept: accept}.FetchSettled(ctx, url, settle)
}

// FetchWith scrapes url once through client with the default bounds.
func FetchWith(ctx context.Context, client *http.Client, rawURL string, accept Accept) (*Snapshot, error) {
	return Options{Accept: accept, Client: client}.Fetch(ctx, rawURL)
}

// FetchSettled waits settle (so the server can finalize the requests it just
// served) and then scrapes url like Fetch; a ctx cancelled during the wait
// ends it with ctx's error.
func (o Options) FetchSettled(ctx context.Context, url string, settle time.Duration) (*Snapshot, error) {
	if settle > 0 {
		t := time.NewTimer(settle)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting %s before scraping %s: %w", settle, secret.URL(url), ctx.Err())
		}
	}
	return o.Fetch(ctx, url)
}

// TimeoutError is a scrape that did not complete within Options.Timeout
// (the caller's own context was still live).
type TimeoutError struct {
	URL     string // password removed
	Timeout time.Duration
	Read    int // body bytes received before the deadline
}

func (e *TimeoutError) Error() string {
	if e.Read > 0 {
		return fmt.Sprintf("scrape %s: no complete answer within %s (%d bytes read)", e.URL, e.Timeout, e.Read)
	}
	return fmt.Sprintf("scrape %s: no answer within %s", e.URL, e.Timeout)
}

// LimitError is an exposition larger than a cap: more bytes than
// Options.MaxBytes or more samples than Options.MaxSamples.
type LimitError struct {
	Source string
	What   string // "bytes" or "samples"
	Limit  int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: exposition has more than %d %s (the cap)", e.Source, e.Limit, e.What)
}

// Fetch scrapes url once and returns the response as a Snapshot (the body
// as received, but for the credentials of o.Redact and of the URL, which are
// masked), after checking that the body parses. The whole scrape is bounded by o.Timeout
// as well as by ctx. Errors name the URL (with any password removed).
func (o Options) Fetch(ctx context.Context, rawURL string) (*Snapshot, error) {
	snap, err := o.FetchUnparsed(ctx, rawURL, nil)
	if err != nil {
		return nil, err
	}
	if _, err := snap.Families(); err != nil {
		return nil, err
	}
	return snap, nil
}

// FetchUnparsed is Fetch without the check that the body parses, for a
// caller that parses it next anyway (with a Selector, say) and would
// otherwise pay for decoding it twice. The body is read into buf when it
// is not nil (its contents are overwritten): a caller scraping the same
// server again and again passes the previous Snapshot's Body once done
// with it, so that a large exposition is not allocated anew every time.
func (o Options) FetchUnparsed(ctx context.Context, rawURL string, buf []byte) (*Snapshot, error) {
	shown := secret.URL(rawURL)
	red := o.Redact.With(secret.FromURL(rawURL)...)
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	sctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	// timedOut tells our own deadline from the caller's cancellation.
	timedOut := func(read int) error {
		if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
			return &TimeoutError{URL: shown, Timeout: o.timeout(), Read: read}
		}
		return nil
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, scrubURLError(err))
	}
	req.Header.Set("Accept", o.Accept.Header())
	req.Header.Set("User-Agent", "omnibench-scrape")
	if o.Uncompressed {
		// Set by hand, the header also stops net/http from asking for gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if te := timedOut(0); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("scrape %s: %w", shown, scrubURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 {
		// A final informational answer (101 Switching Protocols): its
		// body is the raw connection, which would be read until the
		// server closes it.
		return nil, &StatusError{URL: shown, Code: resp.StatusCode, Status: red.Clip(resp.Status, maxExcerpt)}
	}
	// The whole exchange ends at the deadline, body included, whatever
	// the answer: closing the body ends a read that the request's context
	// does not reach.
	stop := context.AfterFunc(sctx, func() { resp.Body.Close() })
	defer stop()
	limit := o.maxBytes()
	body, err := readBody(resp, limit, buf)
	if err != nil {
		if te := timedOut(len(body)); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("scrape %s: reading body after %d bytes: %w", shown, len(body), scrubURLError(err))
	}
	if int64(len(body)) > limit {
		return nil, &LimitError{Source: "scrape " + shown, What: "bytes", Limit: limit}
	}
	// A server may quote the request's credentials in the exposition (a
	// HELP text, a label): the snapshot is written to files and
	// summaries, so they are masked here, where it enters.
	body = red.Bytes(body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{URL: shown, Code: resp.StatusCode, Status: red.Clip(resp.Status, maxExcerpt), Body: excerpt(red, body)}
	}
	return &Snapshot{
		URL:         shown,
		ContentType: resp.Header.Get("Content-Type"),
		FetchedAt:   start.UTC(),
		Body:        body,
		MaxSamples:  o.maxSamples(),
	}, nil
}

// readBody reads at most limit+1 bytes of resp's body, into buf when it is
// not nil.
func readBody(resp *http.Response, limit int64, buf []byte) ([]byte, error) {
	r, err := bodyReader(resp)
	if err != nil {
		return nil, err
	}
	r = io.LimitReader(r, limit+1)
	if buf == nil {
		return io.ReadAll(r)
	}
	b := bytes.NewBuffer(buf[:0])
	_, err = b.ReadFrom(r)
	return b.Bytes(), err
}

// bodyReader is resp's body, decompressed when it is still gzip: net/http
// only decompresses what it asked for itself, and a server may compress
// although asked for identity (Options.Uncompressed).
func bodyReader(resp *http.Response) (io.Reader, error) {
	if resp.Uncompressed || !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return resp.Body, nil
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	return zr, nil
}

// StatusError is a non-2xx answer from a metrics endpoint.
type StatusError struct {
	URL    string
	Code   int
	Status string // "503 Service Unavailable"
	Body   string // the start of the body, for the server's own explanation
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("scrape %s: HTTP %s", e.URL, e.Status)
	if e.Status == "" {
		msg = fmt.Sprintf("scrape %s: HTTP %d", e.URL, e.Code)
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// maxExcerpt bounds the server text quoted in a StatusError.
const maxExcerpt = 200

// excerpt is the first line of a body, short and printable, with the
// credentials in red masked before it is cut (secret.Redactor.Clip).
func excerpt(red *secret.Redactor, body []byte) string {
	n := min(len(body), 4*maxExcerpt)
	for n < len(body) && n > 0 && !utf8.RuneStart(body[n]) {
		n-- // no character cut in two
	}
	s := string(body[:n])
	if !utf8.ValidString(s) {
		return ""
	}
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return red.Clip(strings.TrimSpace(s), maxExcerpt)
}

// scrubURLError replaces the URL inside a *url.Error (which net/http prints
// verbatim, credentials included) by its redacted form.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
