package scrape

import (
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

// MaxBodyBytes bounds what Fetch reads from one /metrics response. Real
// servers expose a few hundred kilobytes; anything near this is not metrics.
const MaxBodyBytes = 64 << 20

// Fetch scrapes url once with http.DefaultClient (see FetchWith).
func Fetch(ctx context.Context, url string, accept Accept) (*Snapshot, error) {
	return FetchWith(ctx, http.DefaultClient, url, accept)
}

// FetchSettled waits settle (so the server can finalize the requests it just
// served) and then scrapes url like Fetch; a ctx cancelled during the wait
// ends it with ctx's error.
func FetchSettled(ctx context.Context, url string, accept Accept, settle time.Duration) (*Snapshot, error) {
	if settle > 0 {
		t := time.NewTimer(settle)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting %s before scraping %s: %w", settle, redact(url), ctx.Err())
		}
	}
	return Fetch(ctx, url, accept)
}

// FetchWith scrapes url once and returns the raw response as a Snapshot,
// after checking that the body parses. The request is bounded by ctx only;
// callers set a deadline. Errors name the URL (with any password removed).
func FetchWith(ctx context.Context, client *http.Client, rawURL string, accept Accept) (*Snapshot, error) {
	shown := redact(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, err)
	}
	req.Header.Set("Accept", accept.Header())
	req.Header.Set("User-Agent", "omnibench-scrape")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, scrubURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: reading body after %d bytes: %w", shown, len(body), scrubURLError(err))
	}
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("scrape %s: body larger than %d bytes", shown, MaxBodyBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{URL: shown, Code: resp.StatusCode, Status: resp.Status, Body: excerpt(body)}
	}
	snap := &Snapshot{
		URL:         shown,
		ContentType: resp.Header.Get("Content-Type"),
		FetchedAt:   start.UTC(),
		Body:        body,
	}
	if _, err := snap.Families(); err != nil {
		return nil, err
	}
	return snap, nil
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

// excerpt is the first line of a body, short and printable.
func excerpt(body []byte) string {
	s := string(body[:min(len(body), 200)])
	if !utf8.ValidString(s) {
		return ""
	}
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// redact removes a password from a URL for display.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
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
