package simulator

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// net/http writes a chunked event larger than its 4 KiB connection buffer in
// three syscalls (the buffer fills, the rest goes straight out, then the
// chunk's CRLF on flush). With a thousand streams those syscalls are most of
// the simulator's CPU, so Start wraps every connection in a corkConn: while
// an SSE handler writes one event the connection is corked and collects the
// writes; uncorking sends them in one syscall, like uvicorn's one
// transport.write per event. Keep-alive and the rest of net/http are
// untouched.

// corkConn batches writes between cork and uncork.
type corkConn struct {
	net.Conn
	mu     sync.Mutex // net/http writes from the handler's goroutine, but be safe
	corked bool
	buf    []byte
}

// corkListener wraps accepted connections in corkConns.
type corkListener struct{ net.Listener }

func (l corkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &corkConn{Conn: c}, nil
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite keeps net/http's half-close working through the wrapper.
func (c *corkConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork sends what was collected in one write and reports its error.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > 1<<20 {
		c.buf = nil // don't keep an oversized event's buffer for the connection's life
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// corkKey is the context key of a request's corkConn.
type corkKey struct{}

// withCork is Start's http.Server.ConnContext: it makes the connection's
// corkConn reachable from its requests' contexts.
func withCork(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*corkConn); ok {
		return context.WithValue(ctx, corkKey{}, cc)
	}
	return ctx
}

// corkOf returns the request's corkConn, or nil when the server was not
// started by Start (Handler under httptest, say): events then go out as
// net/http writes them.
func corkOf(ctx context.Context) *corkConn {
	c, _ := ctx.Value(corkKey{}).(*corkConn)
	return c
}

// corked runs write with c corked and then sends what it wrote in one
// write; with a nil c it just runs write.
func corked(c *corkConn, write func() error) error {
	if c == nil {
		return write()
	}
	c.cork()
	err := write()
	if uerr := c.uncork(); err == nil && uerr != nil {
		err = fmt.Errorf("writing event: %w", uerr)
	}
	return err
}
