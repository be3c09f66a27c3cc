package client

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// Distinctive credentials, so that any four bytes of them found in a
// message are a leak, not a coincidence.
const (
	clipKey    = "sk-QZJ7WX-clipkey-8157"
	clipHeader = "hdrVAL-K9QZ-tenant-2046"
)

// leaked returns the longest start (4 bytes or more) of a secret found in
// msg: what a cut through the secret would leave.
func leaked(msg string, secrets ...string) string {
	for _, s := range secrets {
		for k := len(s); k >= 4; k-- {
			if strings.Contains(msg, s[:k]) {
				return s[:k]
			}
		}
	}
	return ""
}

// echoed is what the misbehaving servers quote back: the API key from the
// Authorization header and the custom header's value, padded by the
// X-Pad the test asks for, so that the 200-byte cut of messages falls at
// every offset of the credentials in turn.
func echoed(h http.Header) string {
	n, _ := strconv.Atoi(h.Get("X-Pad"))
	return strings.Repeat("p", n) + strings.TrimPrefix(h.Get("Authorization"), "Bearer ") + " " + h.Get("X-Tenant")
}

// TestServerTextRedactedBeforeClip: a server that quotes the request's
// credentials in a message near the 200-byte cut (an SSE error event, a
// Content-Type, a malformed response head, a redirect Location, an error
// body) leaves nothing of them in the record, whatever the offset.
func TestServerTextRedactedBeforeClip(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"sse error event": func(w http.ResponseWriter, r *http.Request) {
			sseStart(w)
			event(w, "", fmt.Sprintf(`{"error":{"message":%q}}`, echoed(r.Header)))
		},
		"content type": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset="+strings.ReplaceAll(echoed(r.Header), " ", "-"))
			w.WriteHeader(http.StatusOK)
		},
		"redirect location": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/"+strings.ReplaceAll(echoed(r.Header), " ", "/"))
			w.WriteHeader(http.StatusFound)
		},
		"error body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, echoed(r.Header))
		},
	}
	urls := map[string]string{"malformed head": echoHeadServer(t)}
	for name, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	for name, url := range urls {
		c := newClient(t, url, Options{APIKey: clipKey})
		for pad := 120; pad <= 200; pad++ {
			rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x",
				Headers: map[string]string{"X-Pad": strconv.Itoa(pad), "X-Tenant": clipHeader}})
			if rec.ErrorClass == "" {
				t.Fatalf("%s: no failure", name)
			}
			if l := leaked(rec.Error, clipKey, clipHeader); l != "" {
				t.Fatalf("%s, pad %d: the error keeps %q: %s", name, pad, l, rec.Error)
			}
		}
	}
}

// echoHeadServer answers each request with a response head whose second
// line is no header at all but the echoed credentials: the transport's
// error quotes that line.
func echoHeadServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds a stuck client
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", echoed(req.Header))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestProxyCredentialsRedacted: a proxy that refuses with 407 and quotes
// the request's headers back (its own Proxy-Authorization among them)
// leaves nothing of the proxy's credentials in the record, though only the
// environment named them.
func TestProxyCredentialsRedacted(t *testing.T) {
	const user, pass = "proxyuser", "prx-PW-Z81Q4"
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusProxyAuthRequired)
		// Only the token, so that no "Basic " before it gives it away.
		auth := strings.TrimPrefix(r.Header.Get("Proxy-Authorization"), "Basic ")
		io.WriteString(w, strings.Repeat("p", 150)+" got "+auth)
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", strings.Replace(proxy.URL, "http://", "http://"+user+":"+pass+"@", 1))
	t.Setenv("NO_PROXY", "")
	// Not a loopback name: requests to those never go through a proxy.
	c := newClient(t, "http://bench.invalid:8000", Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	if rec.Status != http.StatusProxyAuthRequired {
		t.Fatalf("status %d (%s), want the proxy's 407", rec.Status, rec.Error)
	}
	token := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	if l := leaked(rec.Error, token, pass); l != "" {
		t.Fatalf("the error keeps %q of the proxy's credentials: %s", l, rec.Error)
	}
}
