//go:build linux

package runner_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/omnibench/omnibench/scenarios"
)

// connRun is the bare loop without net/http's Transport: n streams at once,
// each on a connection of its own that the stream's one goroutine dials,
// writes its request to and reads the response from, with net/http's
// response parser (http.ReadResponse, its chunked body) over a buffer of the
// size the bare loop's transport reads with, and the bare loop's line loop.
// It has one goroutine per stream instead of three, and no connection pool:
// bare minus conn is what net/http's Transport costs. omnibench's own
// transport (package http1) follows the same plan with a pool, TLS and
// proxies, so conn is also a floor for it.
func connRun(ctx context.Context, b *testing.B, target string, wl *scenarios.Workload, n int) levelFigures {
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([][]byte, n)
	for i := range n {
		body := bareBody(b, wl.Request(i, 1))
		reqs[i] = fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body)
	}
	// Each stream closes its own connection.
	return streamLevel(b, "conn", n, func(i int) ([]float64, error) {
		return connStream(ctx, u.Host, reqs[i])
	}, func() {})
}

// connStream sends one request on a connection of its own and reads the
// response as bareStream does.
func connStream(ctx context.Context, addr string, req []byte) ([]float64, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// The deadline in the past ends a blocked read when ctx is done.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16<<10), nil) // the bare loop's ReadBufferSize
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readEvents(resp)
}
