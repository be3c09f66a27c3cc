package wsclient

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"

	"github.com/coder/websocket"
)

// violation is a server's breach of RFC 6455 that the client must answer by
// failing the connection: it closes with code and a short reason, and the
// turn fails as malformed.
type violation struct {
	code   websocket.StatusCode
	reason string // sent in the close frame: at most 123 bytes
}

func (v *violation) Error() string { return v.reason }

var (
	// errMaskedFrame: a server must not mask its frames (RFC 6455 5.1).
	errMaskedFrame = &violation{code: websocket.StatusProtocolError, reason: "the server sent a masked frame"}
	// errTextNotUTF8: a text message must be UTF-8 (RFC 6455 8.1).
	errTextNotUTF8 = &violation{code: websocket.StatusInvalidFramePayloadData, reason: "a text message is not valid UTF-8"}
	// errReasonNotUTF8: so must a close frame's reason (RFC 6455 5.5.1).
	errReasonNotUTF8 = &violation{code: websocket.StatusInvalidFramePayloadData, reason: "the close frame's reason is not valid UTF-8"}
)

// guardTransport hands the library, instead of the upgraded connection of
// a 101 answer, a frameGuard over it. The library unmasks a masked server
// frame without a word and offers no hook at the frame level; the guard
// sees the bytes after the handshake (after TLS and any proxy), so it works
// whatever the connection went through.
type guardTransport struct{ next http.RoundTripper }

func (t guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
			resp.Body = &frameGuard{rwc: rwc}
		}
	}
	return resp, err
}

// frameGuard passes a connection's bytes through while following the
// server's frame boundaries, and fails the read at the first frame whose
// mask bit is set: it delivers the bytes before that frame's second header
// byte, then errMaskedFrame on every later read. Frames are never buffered:
// it keeps at most one header (10 bytes) and a count of payload to pass.
type frameGuard struct {
	rwc  io.ReadWriteCloser
	hdr  [10]byte // the current frame's header bytes seen so far (mask key excluded: a masked frame ends the scan)
	n    int      // bytes in hdr
	skip uint64   // payload bytes of the current frame still to pass
	err  error    // sticky, once a masked frame was seen
}

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.rwc.Read(p)
	if i := g.scan(p[:n]); i >= 0 {
		g.err = errMaskedFrame
		if i == 0 {
			return 0, g.err
		}
		return i, nil
	}
	return n, err
}

func (g *frameGuard) Write(p []byte) (int, error) { return g.rwc.Write(p) }
func (g *frameGuard) Close() error                { return g.rwc.Close() }

// scan advances the frame state over b and returns the index of the byte
// that shows a masked frame, or -1.
func (g *frameGuard) scan(b []byte) int {
	for i := 0; i < len(b); {
		if g.skip > 0 {
			k := min(uint64(len(b)-i), g.skip)
			g.skip -= k
			i += int(k)
			continue
		}
		g.hdr[g.n] = b[i]
		g.n++
		i++
		if g.n < 2 {
			continue
		}
		if g.n == 2 && g.hdr[1]&0x80 != 0 {
			return i - 1
		}
		if g.n < 2+extLenBytes(g.hdr[1]) {
			continue
		}
		g.skip, g.n = payloadLen(g.hdr[:g.n]), 0
	}
	return -1
}

// extLenBytes is the size of the extended payload length that follows a
// frame's second header byte.
func extLenBytes(b1 byte) int {
	switch b1 & 0x7f {
	case 126:
		return 2
	case 127:
		return 8
	}
	return 0
}

// payloadLen reads the payload length of an unmasked frame's header.
func payloadLen(h []byte) uint64 {
	switch l := h[1] & 0x7f; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return binary.BigEndian.Uint64(h[2:10])
	default:
		return uint64(l)
	}
}

// isViolation reports err's protocol violation, if it is one.
func isViolation(err error) (*violation, bool) {
	var v *violation
	ok := errors.As(err, &v)
	return v, ok
}
