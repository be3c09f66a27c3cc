package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/omnibench/omnibench/internal/http1"
	"github.com/omnibench/omnibench/internal/run/results"
)

// HTTP transports (Options.HTTPTransport).
const (
	// TransportOwn is package http1's transport, in which the caller's
	// goroutine does the work: the default, and the lighter on the client's
	// CPU at many open streams.
	TransportOwn = "own"
	// TransportStd is net/http's Transport, set up alike: the escape hatch
	// when http1 is in doubt, and the other arm of the transports' A/B.
	TransportStd = "std"
)

// Settings both transports share.
const (
	dialTimeout         = 10 * time.Second
	tcpKeepAlive        = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
	maxResponseHead     = 1 << 20
	// readBufferSize holds an 80 ms audio event (about 5 KB of base64 in
	// JSON), so that a stream reads one event with one read call.
	readBufferSize = 8 << 10
	// userAgent is set on every request unless its headers set one, so
	// that both transports send the same (net/http's would send its own).
	userAgent = "omnibench"
)

// roundTripper is what the client needs of an HTTP/1.1 transport. The
// client calls RoundTrip directly, not through an http.Client: a
// RoundTripper returns a redirect as the response (see readResponse), and
// the client's layer would only add frames and allocations to every
// request. Everything the client measures comes from the request's
// httptrace hooks and its own reads, which both transports serve alike.
type roundTripper interface {
	http.RoundTripper
	CloseIdleConnections()
}

// newTransport builds the transport name says (Options.HTTPTransport),
// with one stream per connection, no compression (audio does not compress,
// and a gzip layer would hide each chunk's arrival time), the proxy given
// (the client reads it from the environment) and the TLS settings given
// (nil: the system's roots). Neither bounds its connections: the client does
// (connSlots), so that the bound leaves the drains out.
func newTransport(name string, proxy func(*http.Request) (*url.URL, error), tlsConfig *tls.Config) (roundTripper, error) {
	switch name {
	case "", TransportOwn:
		tr, err := http1.New(http1.Options{
			Proxy:                  proxy,
			TLSConfig:              tlsConfig,
			DialTimeout:            dialTimeout,
			KeepAlive:              tcpKeepAlive,
			TLSHandshakeTimeout:    tlsHandshakeTimeout,
			IdleConnTimeout:        idleConnTimeout,
			ReadBufferSize:         readBufferSize,
			MaxResponseHeaderBytes: maxResponseHead,
		})
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		return tr, nil
	case TransportStd:
		return stdTransport(proxy, tlsConfig), nil
	}
	return nil, fmt.Errorf("client: HTTP transport %q: want %s or %s", name, TransportOwn, TransportStd)
}

// stdTransport is net/http's Transport with http1's settings: HTTP/1.1
// only (an empty TLSNextProto turns HTTP/2 off, and ALPN offers http/1.1),
// and every idle connection kept, as http1 keeps them.
func stdTransport(proxy func(*http.Request) (*url.URL, error), tlsConfig *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: tcpKeepAlive}
	tlsc := &tls.Config{}
	if tlsConfig != nil {
		tlsc = tlsConfig.Clone()
	}
	tlsc.NextProtos = []string{"http/1.1"}
	return &http.Transport{
		Proxy:                  proxy,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsc,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		DisableCompression:     true,
		MaxIdleConnsPerHost:    math.MaxInt,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxResponseHead,
		ReadBufferSize:         readBufferSize,
	}
}

// clientLimit classifies a failure to get a connection that is the client
// machine's own limit rather than the server's failure, or returns nil. The
// message says which limit and what to do: out of file descriptors (the
// process's EMFILE, the system's ENFILE), or out of local ports for new
// connections (EADDRNOTAVAIL on connect).
func clientLimit(err error) error {
	var what string
	switch {
	case errors.Is(err, syscall.EMFILE):
		what = "the client ran out of file descriptors (EMFILE): raise ulimit -n or shard the load (run --shard)"
	case errors.Is(err, syscall.ENFILE):
		what = "the client's system ran out of file descriptors (ENFILE): raise fs.file-max or shard the load over machines (run --shard)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		what = "the client ran out of local ports (EADDRNOTAVAIL): widen net.ipv4.ip_local_port_range or shard the load over machines (run --shard)"
	default:
		return nil
	}
	return fail(results.ErrClientLimit, "%s: %w", what, err)
}
