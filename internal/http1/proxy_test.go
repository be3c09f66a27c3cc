package http1

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testProxy is a small forward proxy: absolute-form requests are forwarded
// with a fresh net/http Transport, CONNECT requests become a byte pipe to
// the target. It records what each request looked like on arrival.
type testProxy struct {
	url           *url.URL // with the user and password the tests use
	conns         *connCounter
	refuseConnect bool
	fwd           *http.Transport

	mu     sync.Mutex
	seen   []proxied
	tunnel []net.Conn
	wg     sync.WaitGroup
}

type proxied struct {
	method, requestURI, proxyAuth string
}

const proxyPassword = "pr0xy-s3cret"

func newTestProxy(t *testing.T) *testProxy {
	p := &testProxy{fwd: &http.Transport{}}
	srv, cc := newCountingServer(t, p)
	p.conns = cc
	p.url = &url.URL{Scheme: "http", User: url.UserPassword("bench", proxyPassword), Host: srv.Listener.Addr().String()}
	t.Cleanup(func() {
		p.fwd.CloseIdleConnections()
		p.mu.Lock()
		for _, c := range p.tunnel {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *testProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *testProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, proxied{method: r.Method, requestURI: r.RequestURI, proxyAuth: r.Header.Get("Proxy-Authorization")})
	p.mu.Unlock()
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out.ContentLength = r.ContentLength
	for k, vs := range r.Header {
		if k != "Proxy-Authorization" && k != "Connection" {
			out.Header[k] = vs
		}
	}
	resp, err := p.fwd.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *testProxy) connect(w http.ResponseWriter, r *http.Request) {
	if p.refuseConnect {
		http.Error(w, "no tunnels here", http.StatusForbidden)
		return
	}
	target, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		target.Close()
		return
	}
	p.mu.Lock()
	p.tunnel = append(p.tunnel, client, target)
	p.mu.Unlock()
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		target.Close()
		return
	}
	pipe := func(dst net.Conn, src io.Reader) {
		defer p.wg.Done()
		io.Copy(dst, src)
		client.Close()
		target.Close()
	}
	p.wg.Add(2)
	go pipe(target, brw.Reader)
	go pipe(client, target)
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

func TestProxyHTTPTarget(t *testing.T) {
	target := newTarget(t, false)
	proxy := newTestProxy(t)
	tr := newTransport(t, Options{Proxy: http.ProxyURL(proxy.url)})
	ctx := testCtx(t)
	var log traceLog
	for range 2 {
		if _, got := roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, target.srv.URL+"/v1/x?q=1", nil)); got != "target says hi" {
			t.Fatalf("body %q; want the target's answer", got)
		}
	}
	want := proxied{method: http.MethodGet, requestURI: target.srv.URL + "/v1/x?q=1", proxyAuth: basicAuth("bench", proxyPassword)}
	if got := proxy.requests(); !slices.Equal(got, []proxied{want, want}) {
		t.Errorf("at the proxy: %+v; want twice %+v", got, want)
	}
	for _, r := range target.requests() {
		if r.proxyAuth != "" || r.requestURI != "/v1/x?q=1" {
			t.Errorf("at the target: %+v; want no Proxy-Authorization and the origin-form target", r)
		}
	}
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, true}) {
		t.Errorf("GotConn Reused: %v; want [false true]", reused)
	}
	if total, _, _ := proxy.conns.counts(); total != 1 {
		t.Errorf("the proxy saw %d connections; want 1", total)
	}
}

func TestProxyHTTPSTarget(t *testing.T) {
	target := newTarget(t, true)
	proxy := newTestProxy(t)
	tr := newTransport(t, Options{Proxy: http.ProxyURL(proxy.url), TLSConfig: &tls.Config{RootCAs: rootCAs(target.srv)}})
	ctx := testCtx(t)
	var log traceLog
	for range 2 {
		if _, got := roundTrip(t, tr, newRequest(t, withTrace(ctx, &log), http.MethodGet, target.srv.URL+"/s", nil)); got != "target says hi" {
			t.Fatalf("body %q; want the target's answer", got)
		}
	}
	addr := target.srv.Listener.Addr().String()
	want := []proxied{{method: http.MethodConnect, requestURI: addr, proxyAuth: basicAuth("bench", proxyPassword)}}
	if got := proxy.requests(); !slices.Equal(got, want) {
		t.Errorf("at the proxy: %+v; want one tunnel %+v", got, want)
	}
	for _, r := range target.requests() {
		if r.proxyAuth != "" || !r.tls || r.protoMajor != 1 || r.requestURI != "/s" || r.host != addr {
			t.Errorf("at the target: %+v; want HTTP/1 over TLS, Host %s, target /s, no Proxy-Authorization", r, addr)
		}
	}
	if _, reused := log.take(); !slices.Equal(reused, []bool{false, true}) {
		t.Errorf("GotConn Reused: %v; want [false true]", reused)
	}
}

// TestProxyNeverAnswersConnect: a proxy that accepts and reads the
// CONNECT but never answers fails the request after DialTimeout, with a
// message that says so, though the request's context has no deadline.
func TestProxyNeverAnswersConnect(t *testing.T) {
	silent := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		readHead(br)
		br.ReadByte() // blocks until the transport gives up and closes
	})
	proxy := &url.URL{Scheme: "http", User: url.UserPassword("bench", proxyPassword), Host: silent.ln.Addr().String()}
	tr := newTransport(t, Options{Proxy: http.ProxyURL(proxy), DialTimeout: 50 * time.Millisecond})
	resp, err := tr.RoundTrip(newRequest(t, testCtx(t), http.MethodGet, "https://127.0.0.1:1/", nil))
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error from a proxy that never answers CONNECT")
	}
	if !strings.Contains(err.Error(), "did not answer CONNECT within 50ms") {
		t.Errorf("error %q does not say the proxy did not answer", err)
	}
	if strings.Contains(err.Error(), proxyPassword) {
		t.Errorf("error %q shows the proxy's password", err)
	}
	if open, _ := tr.OpenConns(); open != 0 {
		t.Errorf("OpenConns = %d; want 0", open)
	}
}

func TestProxyErrors(t *testing.T) {
	refusing := newTestProxy(t)
	refusing.refuseConnect = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	cases := []struct {
		name   string
		target string
		proxy  func(*http.Request) (*url.URL, error)
		want   string
	}{
		{name: "CONNECT refused", target: "https://127.0.0.1:1/", proxy: http.ProxyURL(refusing.url), want: "refused the tunnel to 127.0.0.1:1: 403 Forbidden"},
		{name: "socks proxy", target: "http://127.0.0.1:1/", want: "only http:// proxies",
			proxy: http.ProxyURL(&url.URL{Scheme: "socks5", User: url.UserPassword("bench", proxyPassword), Host: "127.0.0.1:1"})},
		{name: "https proxy", target: "http://127.0.0.1:1/", want: "only http:// proxies",
			proxy: http.ProxyURL(&url.URL{Scheme: "https", User: url.UserPassword("bench", proxyPassword), Host: "127.0.0.1:1"})},
		{name: "proxy unreachable", target: "http://127.0.0.1:1/", want: "connecting to the proxy",
			proxy: http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("bench", proxyPassword), Host: closedAddr})},
		{name: "proxy function fails", target: "http://127.0.0.1:1/", want: "finding the proxy: no proxy today",
			proxy: func(*http.Request) (*url.URL, error) { return nil, errors.New("no proxy today") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(t, Options{Proxy: tc.proxy})
			resp, err := tr.RoundTrip(newRequest(t, testCtx(t), http.MethodGet, tc.target, nil))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, proxyPassword) || strings.Contains(msg, basicAuth("bench", proxyPassword)) {
				t.Errorf("error %q shows the proxy's credentials", msg)
			}
			if open, _ := tr.OpenConns(); open != 0 {
				t.Errorf("OpenConns = %d; want 0", open)
			}
		})
	}
}

// TestProxyNilIsDirect: a Proxy function returning nil means no proxy.
func TestProxyNilIsDirect(t *testing.T) {
	target := newTarget(t, false)
	tr := newTransport(t, Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
	roundTrip(t, tr, newRequest(t, testCtx(t), http.MethodGet, target.srv.URL+"/d", nil))
	if got := target.requests(); len(got) != 1 || got[0].requestURI != "/d" {
		t.Errorf("at the target: %+v; want one direct request for /d", got)
	}
}

// TestProxyBadConnectAnswers: a proxy whose answer to CONNECT is not HTTP,
// or that sends bytes of its own after it, fails the request; the error
// shows neither the password nor the Proxy-Authorization value.
func TestProxyBadConnectAnswers(t *testing.T) {
	cases := map[string]struct{ answer, want string }{
		"not HTTP":               {answer: "SOCKS?\r\n\r\n", want: "reading the proxy's answer to CONNECT"},
		"bytes after the answer": {answer: "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", want: "after its CONNECT answer"},
		"head too large":         {answer: "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", 4096) + "\r\n\r\n", want: "larger than 1024 bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotAuth := make(chan string, 1)
			var proxy *rawServer
			proxy = newRawServer(t, func(c net.Conn, br *bufio.Reader) {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				gotAuth <- req.Header.Get("Proxy-Authorization")
				// One write, so the client's buffer sees the extra bytes
				// with the answer.
				io.WriteString(c, tc.answer)
				<-proxy.done
			})
			pu := &url.URL{Scheme: "http", User: url.UserPassword("bench", proxyPassword), Host: proxy.ln.Addr().String()}
			tr := newTransport(t, Options{Proxy: http.ProxyURL(pu), MaxResponseHeaderBytes: 1024})
			ctx := testCtx(t)
			resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, "https://127.0.0.1:1/", nil))
			if err == nil {
				resp.Body.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, proxyPassword) || strings.Contains(msg, basicAuth("bench", proxyPassword)) {
				t.Errorf("error %q shows the proxy's credentials", msg)
			}
			if auth := recv(t, ctx, "the CONNECT request", gotAuth); auth != basicAuth("bench", proxyPassword) {
				t.Errorf("Proxy-Authorization at the proxy: %q", auth)
			}
			if open, _ := tr.OpenConns(); open != 0 {
				t.Errorf("OpenConns = %d; want 0", open)
			}
		})
	}
}
