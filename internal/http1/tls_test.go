package http1

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tlsTarget is an httptest TLS server (HTTP/2 enabled, so that only the
// client's ALPN offer keeps it at HTTP/1.1) recording each request's
// protocol version and Proxy-Authorization.
type tlsTarget struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	protoMajor int
	tls        bool
	proxyAuth  string
	host       string
	requestURI string
}

func newTarget(t *testing.T, useTLS bool) *tlsTarget {
	tt := &tlsTarget{}
	tt.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tt.mu.Lock()
		tt.seen = append(tt.seen, seenRequest{
			protoMajor: r.ProtoMajor, tls: r.TLS != nil, proxyAuth: r.Header.Get("Proxy-Authorization"),
			host: r.Host, requestURI: r.RequestURI,
		})
		tt.mu.Unlock()
		io.WriteString(w, "target says hi")
	}))
	tt.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the wrong-CA test's handshake error
	if useTLS {
		// The server prefers h2: a client that offered it would get it.
		tt.srv.TLS = &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
		tt.srv.EnableHTTP2 = true
		tt.srv.StartTLS()
	} else {
		tt.srv.Start()
	}
	t.Cleanup(tt.srv.Close)
	return tt
}

func (tt *tlsTarget) requests() []seenRequest {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return slices.Clone(tt.seen)
}

// rootCAs trusts the httptest server's certificate only.
func rootCAs(srv *httptest.Server) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}

func TestTLS(t *testing.T) {
	target := newTarget(t, true)
	// The caller's configuration asks for h2; the transport must offer
	// http/1.1 only, and leave the caller's configuration as it was.
	cfg := &tls.Config{RootCAs: rootCAs(target.srv), NextProtos: []string{"h2"}}
	tr := newTransport(t, Options{TLSConfig: cfg})
	ctx := testCtx(t)
	var log traceLog
	for range 2 {
		resp, got := roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, target.srv.URL+"/x", nil))
		if got != "target says hi" || resp.ProtoMajor != 1 {
			t.Fatalf("body %q, proto %s; want the target's answer over HTTP/1.x", got, resp.Proto)
		}
	}
	events, reused := log.take()
	want := []string{
		"GetConn", "ConnectStart", "ConnectDone", "TLSHandshakeStart", "TLSHandshakeDone", "GotConn", "WroteRequest", "GotFirstResponseByte",
		"GetConn", "GotConn", "WroteRequest", "GotFirstResponseByte",
	}
	if !slices.Equal(events, want) {
		t.Errorf("trace events:\n%v\nwant:\n%v", events, want)
	}
	if !slices.Equal(reused, []bool{false, true}) {
		t.Errorf("GotConn Reused: %v; want [false true]", reused)
	}
	if !slices.Equal(log.tls, []string{"http/1.1"}) {
		t.Errorf("ALPN protocols negotiated: %q; want [http/1.1]", log.tls)
	}
	for i, r := range target.requests() {
		if r.protoMajor != 1 || !r.tls {
			t.Errorf("request %d at the server: HTTP/%d, TLS %v; want HTTP/1 over TLS", i, r.protoMajor, r.tls)
		}
	}
	// The check above can fail: net/http's client, offering h2, gets it.
	resp, err := target.srv.Client().Get(target.srv.URL)
	if err != nil {
		t.Fatalf("net/http client: %v", err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("net/http's client got %s from the test server; want HTTP/2 (else the ALPN check proves nothing)", resp.Proto)
	}
	if !slices.Equal(cfg.NextProtos, []string{"h2"}) {
		t.Errorf("the caller's TLSConfig.NextProtos became %q", cfg.NextProtos)
	}
}

func TestTLSWrongCA(t *testing.T) {
	target := newTarget(t, true)
	var log traceLog
	tr := newTransport(t, Options{TLSConfig: &tls.Config{RootCAs: x509.NewCertPool()}})
	resp, err := tr.RoundTrip(newRequest(t, withTrace(testCtx(t), &log), http.MethodGet, target.srv.URL, nil))
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error with a CA that did not sign the server's certificate")
	}
	var unknown x509.UnknownAuthorityError
	if !strings.Contains(err.Error(), "TLS handshake with "+target.srv.Listener.Addr().String()) || !errors.As(err, &unknown) {
		t.Errorf("error %q (%T); want a TLS handshake error naming the server, wrapping x509.UnknownAuthorityError", err, err)
	}
	if events, _ := log.take(); !slices.Contains(events, "TLSHandshakeDone") || slices.Contains(events, "GotConn") {
		t.Errorf("trace events %v; want TLSHandshakeDone and no GotConn", events)
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0", open)
	}
}
