package wsclient

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// The tests in this file run the client against servers that break RFC
// 6455 in ways the library lets through: the handshake and the frames are
// written by hand over a plain listener.

// rawTimeout bounds every wait of a raw server (generous: a loaded machine).
const rawTimeout = 30 * time.Second

// rawServer accepts connections on a loopback listener, answers the
// request head with what answer returns (the whole response head), and
// then, if the answer was a 101, runs script on the connection. It returns
// the base URL.
func rawServer(t *testing.T, answer func(req *http.Request) string, script func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 8 { // a session dials once; a bound all the same
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(rawTimeout))
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					t.Errorf("raw server: %v", err)
					return
				}
				head := answer(req)
				if _, err := io.WriteString(c, head); err != nil {
					t.Errorf("raw server: %v", err)
					return
				}
				if strings.HasPrefix(head, "HTTP/1.1 101") {
					script(c, br)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// upgrade is the 101 answer to a WebSocket handshake request.
func upgrade(req *http.Request) string {
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
}

// wsFrame encodes one final frame; mask set masks it (as only a client may).
func wsFrame(opcode byte, payload []byte, mask bool) []byte {
	var b bytes.Buffer
	b.WriteByte(0x80 | opcode)
	m := byte(0)
	if mask {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b.WriteByte(m | byte(n))
	default:
		b.WriteByte(m | 126)
		_ = binary.Write(&b, binary.BigEndian, uint16(n))
	}
	if !mask {
		b.Write(payload)
		return b.Bytes()
	}
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	b.Write(key[:])
	for i, c := range payload {
		b.WriteByte(c ^ key[i%4])
	}
	return b.Bytes()
}

// closePayload is a close frame's payload: the code and the reason.
func closePayload(code uint16, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, code), reason...)
}

// readClientFrame reads one of the client's (masked) frames and returns
// its opcode and unmasked payload.
func readClientFrame(br *bufio.Reader) (opcode byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	var key [4]byte
	if _, err := io.ReadFull(br, key[:]); err != nil {
		return 0, nil, err
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("client frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return 0, nil, err
	}
	for i := range p {
		p[i] ^= key[i%4]
	}
	return h[0] & 0x0f, p, nil
}

// readClientClose reads the client's frames until its close frame and
// returns the close code, or -1 when the connection ended first.
func readClientClose(br *bufio.Reader) int {
	for range 1000 {
		op, p, err := readClientFrame(br)
		if err != nil {
			return -1
		}
		if op == 8 {
			if len(p) < 2 {
				return 1005
			}
			return int(binary.BigEndian.Uint16(p))
		}
	}
	return -1
}

// awaitUtterance reads the client's frames up to its first input.done, so
// that a frame the server sends next cannot race the client's own writes
// of that utterance.
func awaitUtterance(br *bufio.Reader) error {
	for range 1000 {
		_, p, err := readClientFrame(br)
		if err != nil {
			return err
		}
		if bytes.Contains(p, []byte(`"input.done"`)) {
			return nil
		}
	}
	return errors.New("no input.done in 1000 frames")
}

// TestServerProtocolViolations: a server frame that RFC 6455 says must
// fail the connection (a masked frame, a text message or a close reason
// that is not UTF-8) fails the turn as malformed, naming the violation,
// and the client closes with the code the RFC gives. The library accepted
// all three: it unmasks a masked frame and hands over any bytes as text.
func TestServerProtocolViolations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
		code  int // the client's close code; 0: the server closed first
	}{
		{"masked frame", wsFrame(1, []byte(`{"type":"audio.start","sample_rate":24000}`), true), "the server sent a masked frame", 1002},
		{"text not UTF-8", wsFrame(1, []byte("{\"type\":\"audio.start\",\"x\":\"\xff\xfe\"}"), false), "a text message is not valid UTF-8", 1007},
		{"close reason not UTF-8", wsFrame(8, closePayload(1000, "bye \xff"), false), "the close frame's reason is not valid UTF-8", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			codes := make(chan int, 1)
			url := rawServer(t, upgrade, func(c net.Conn, br *bufio.Reader) {
				if err := awaitUtterance(br); err != nil {
					t.Errorf("raw server: %v", err)
				}
				if _, err := c.Write(tc.frame); err != nil {
					t.Errorf("raw server: %v", err)
				}
				codes <- readClientClose(br)
				_, _ = c.Write(wsFrame(8, closePayload(1000, ""), false))
			})
			c := newClient(t, url, Options{})
			recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:2]})
			wantFail(t, recs[0], results.ErrMalformed, tc.want)
			wantFail(t, recs[1], results.ErrMalformed, "not sent")
			if code := <-codes; tc.code != 0 && code != tc.code {
				t.Errorf("the client closed with %d, want %d", code, tc.code)
			}
		})
	}
}

// TestHandshakeRedirectNotFollowed: a handshake answered with a redirect to
// another host fails, naming the host, and nothing reaches that host:
// neither a session measured there nor the request's headers. The library
// (net/http underneath) followed it, headers and all.
func TestHandshakeRedirectNotFollowed(t *testing.T) {
	const tenantKey = "tenant-key-5678"
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "not a WebSocket server", http.StatusNotFound)
	}))
	defer other.Close()
	host := strings.TrimPrefix(other.URL, "http://")
	for _, code := range []int{301, 302, 307, 308} {
		url := rawServer(t, func(req *http.Request) string {
			return fmt.Sprintf("HTTP/1.1 %d Moved\r\nLocation: %s%s?token=abc\r\nContent-Length: 0\r\n\r\n", code, other.URL, req.URL.Path)
		}, nil)
		c := newClient(t, url, Options{})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:1], Headers: map[string]string{"X-Api-Key": tenantKey}})
		want := fmt.Sprintf("the server redirected the WebSocket handshake (HTTP %d) to %s: not followed", code, host)
		wantFail(t, recs[0], results.ErrHTTPStatus, want)
		if strings.Contains(recs[0].Error, "token=abc") {
			t.Errorf("the error shows the Location's query: %s", recs[0].Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the redirect was followed %d times (headers %q sent to the other host)", len(seen), seen)
	}
}
