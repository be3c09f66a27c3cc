package simulator

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// WSConfig holds the timeouts and limits of the WebSocket endpoints
// (docs/reference/websocket.md, sections 2.7, 4.6 and 6). Zero fields mean the
// upstream values; tests shorten the timeouts so that they never wait 10 s.
type WSConfig struct {
	// SpeechConfigTimeout bounds the wait for the first message on
	// /v1/audio/speech/stream (upstream 10 s).
	SpeechConfigTimeout time.Duration
	// SpeechIdleTimeout bounds every later wait, between utterances too
	// (upstream 30 s).
	SpeechIdleTimeout time.Duration
	// RealtimeFirstTimeout bounds the wait for the first event on
	// /v1/realtime?duplex=1 (upstream 10 s).
	RealtimeFirstTimeout time.Duration
	// RealtimeIdleTimeout is the default idle_timeout_s of a realtime
	// session (upstream 300 s); session.update may set its own.
	RealtimeIdleTimeout time.Duration
	// MaxFrameBytes is the largest incoming message (uvicorn's ws_max_size,
	// 16 MiB); a larger one closes the connection with 1009.
	MaxFrameBytes int64
	// NoForcedAligner makes word_timestamps fail as on a server started
	// without --forced-aligner. By default the simulator has an aligner.
	NoForcedAligner bool
	// RealtimeEvents is the spelling of the duplex session's audio events:
	// RealtimeEventsGA (the default: response.output_audio.*, as current
	// servers send) or RealtimeEventsLegacy (response.audio.*, release
	// 0.28.0 and older).
	RealtimeEvents string
}

// Upstream values of WSConfig.
const (
	defaultSpeechConfigTimeout  = 10 * time.Second
	defaultSpeechIdleTimeout    = 30 * time.Second
	defaultRealtimeFirstTimeout = 10 * time.Second
	defaultRealtimeIdleTimeout  = 300 * time.Second
	defaultWSMaxFrameBytes      = 16 << 20
)

func (c WSConfig) withDefaults() WSConfig {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&c.SpeechConfigTimeout, defaultSpeechConfigTimeout)
	set(&c.SpeechIdleTimeout, defaultSpeechIdleTimeout)
	set(&c.RealtimeFirstTimeout, defaultRealtimeFirstTimeout)
	set(&c.RealtimeIdleTimeout, defaultRealtimeIdleTimeout)
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = defaultWSMaxFrameBytes
	}
	if c.RealtimeEvents == "" {
		c.RealtimeEvents = RealtimeEventsGA
	}
	return c
}

// wsMessage is one message read from a client, or the read error that
// ended the connection.
type wsMessage struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

// pumpMessages reads c's messages into the returned channel until a read
// fails (the last value then carries the error) or ctx ends. Reading in its
// own goroutine lets a handler wait for a message with a timeout and still
// answer before closing: coder/websocket closes the connection when the
// context of a Read ends. Messages that arrive while the handler is busy
// wait in the channel as they would wait in the socket.
func pumpMessages(ctx context.Context, c *websocket.Conn) <-chan wsMessage {
	ch := make(chan wsMessage, 8)
	go func() {
		defer close(ch)
		for {
			typ, data, err := c.Read(ctx)
			select {
			case ch <- wsMessage{typ: typ, data: data, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// errWSTimeout is what nextMessage reports when no message came in time.
type errWSTimeout struct{}

func (errWSTimeout) Error() string { return "timeout" }

// nextMessage waits up to timeout for the next message.
func nextMessage(ctx context.Context, ch <-chan wsMessage, timeout time.Duration) wsMessage {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m, ok := <-ch:
		if !ok {
			return wsMessage{err: context.Canceled}
		}
		return m
	case <-t.C:
		return wsMessage{err: errWSTimeout{}}
	case <-ctx.Done():
		return wsMessage{err: ctx.Err()}
	}
}

// acceptWS upgrades a request to a WebSocket with the server's frame limit.
// A failed upgrade has already been answered by websocket.Accept.
func (s *Server) acceptWS(w http.ResponseWriter, r *http.Request) (*websocket.Conn, bool) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, false
	}
	c.SetReadLimit(s.cfg.WS.MaxFrameBytes)
	return c, true
}

// serveWS accepts the WebSocket handshake of r and runs serve on the
// connection with a context that ends with the handler; the connection is
// closed without a close frame when serve returns, unless serve closed it.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, serve func(ctx context.Context, c *websocket.Conn)) {
	c, ok := s.acceptWS(w, r)
	if !ok {
		return
	}
	defer c.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	serve(ctx, c)
}

// wsWriteTimeout bounds one write to a client that does not read.
const wsWriteTimeout = 30 * time.Second

// writeWS sends one message with the write deadline.
func writeWS(ctx context.Context, c *websocket.Conn, typ websocket.MessageType, p []byte) error {
	wctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return c.Write(wctx, typ, p)
}

// writeJSONWS sends v as one JSON text message.
func writeJSONWS(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeWS(ctx, c, websocket.MessageText, b)
}
