// Package wsclient is omnibench's client for the WebSocket kinds: speech-ws
// (WS /v1/audio/speech/stream, incremental text in, TTS audio out), realtime
// (the OpenAI-Realtime text-in, audio-out turn of WS /v1/realtime?duplex=1,
// or the same turn in the duplex session's native schema on WS /v1/duplex)
// and realtime-audio (plain WS /v1/realtime: 16 kHz speech appended in real
// time, speech out). One Session is one connection carrying K
// utterances or turns in turn; each becomes one results.Record with its own
// TTFP, chunk timeline, RTFs and continuity, filled by the same code as the
// HTTP kinds (client.AddChunk, client.Client.FinishAudio).
//
// # Transport
//
// github.com/coder/websocket does the framing, answers pings while a read is
// pending (whenever the session waits for a message) and reports close
// frames. The session reads on its own goroutine. A paced sender and the
// bounded waits at the end of a connection hand reading to a reader
// goroutine for the rest of the session (conn.startReader): the appends of
// realtime-audio wait for their next send and for messages at once, and
// speech-ws text sent at Session.TextRate can take longer than a server
// waits for the answer to its ping. The idle timeout and the turn's
// deadline end a wait by closing the connection (waitWatch): both fail the
// session. The API key goes as "Authorization: Bearer" on the handshake;
// the client sends text frames only; a server message larger than
// Options.MaxMessageBytes fails the record as malformed (the library closes
// the connection with 1009) rather than being buffered. Every wait has a
// deadline: the handshake and the close by Options.IdleTimeout, each message
// by Options.IdleTimeout, each utterance or turn by Options.Timeout.
//
// # Timing
//
// A record's offsets are measured from the message that asks for the audio:
// input.done (speech-ws), conversation.item.create (realtime, as the
// vLLM-Omni benchmark starts its clock; input.text.append on /v1/duplex) and the final
// input_audio_buffer.commit (realtime-audio: the end of speech). Receive times are taken when the
// whole message has been read.
package wsclient

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/tlsconf"
)

// Endpoint paths.
const (
	SpeechStreamPath = "/v1/audio/speech/stream"
	RealtimePath     = "/v1/realtime"
	// DuplexPath is the duplex session in its native schema: a realtime
	// session whose Endpoint is this path speaks that schema (realtime.go).
	DuplexPath = "/v1/duplex"
)

// DefaultMaxMessageBytes caps one server message: a non-streaming WAV frame
// or a large JSON delta exceeds the 1 MiB default of common clients, and the
// upstream clients use 64 MiB.
const DefaultMaxMessageBytes = 64 << 20

// Options configures a Client.
type Options struct {
	// BaseURL is the server's root (http or https; ws and wss are used).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" on the handshake.
	APIKey string
	// Timeout bounds one utterance or turn, from its first message to its
	// end; 0 means none.
	Timeout time.Duration
	// IdleTimeout fails an utterance or turn when no message arrived for
	// this long; it also bounds the handshake and the closing handshake.
	// 0 means 30 s.
	IdleTimeout time.Duration
	// MaxMessageBytes caps one server message; default DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// TLSConfig is used for wss (package tlsconf); nil verifies the
	// server's certificate against the system's roots.
	TLSConfig *tls.Config
}

// Client runs WebSocket sessions. It is safe for concurrent use.
type Client struct {
	opts Options
	base *url.URL
	fin  *client.Client // fills the derived audio fields
	http *http.Client   // the handshakes': no redirects, frames guarded
	// inputs holds realtime-audio's append messages per spoken clip.
	inputs inputCache
	// buffers lends the sessions' readers the buffers messages are read into.
	buffers bufferPool
}

// defaultIdle is the idle timeout when Options.IdleTimeout is 0.
const defaultIdle = 30 * time.Second

// New validates opts. fin is the HTTP client whose continuity options fill
// the derived audio fields, so both transports report alike.
func New(opts Options, fin *client.Client) (*Client, error) {
	if fin == nil {
		return nil, errors.New("wsclient: no client for the audio bookkeeping")
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("wsclient: base URL is not a valid URL: %w", errors.Unwrap(err))
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("wsclient: base URL %s: scheme must be http, https, ws or wss", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("wsclient: base URL %s has no host", u.Redacted())
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	if opts.Timeout < 0 || opts.IdleTimeout < 0 {
		return nil, fmt.Errorf("wsclient: negative timeout (timeout %v, idle timeout %v)", opts.Timeout, opts.IdleTimeout)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = defaultIdle
	}
	if opts.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("wsclient: max message bytes %d must be >= 0", opts.MaxMessageBytes)
	}
	if opts.MaxMessageBytes == 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	hc := &http.Client{
		Transport: guardTransport{next: tlsconf.Transport(opts.TLSConfig)},
		// A redirected handshake is not followed, as the HTTP kinds do not
		// follow redirects: the next host would be measured in place of
		// the one asked for, and handed the request's credentials. dial
		// reports it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{opts: opts, base: u, fin: fin, http: hc}, nil
}

// Session is one connection's work.
type Session struct {
	Seq      int    // the session's number in the run (results.WSTurn.Session)
	Kind     string // results.KindSpeechWS or results.KindRealtime
	Endpoint string // URL path (may carry a query); empty means the kind's
	Model    string
	Voice    string
	// Texts are the utterances (speech-ws) or user turns (realtime), in order.
	Texts []string
	// SpeechAudio is how speech-ws audio comes: SpeechStream (default),
	// SpeechFile or SpeechTimestamps.
	SpeechAudio string
	// AudioFormat is the file format in SpeechFile mode: "wav" (default) or "pcm".
	AudioFormat string
	// PCMSampleRate is the rate of headerless PCM. speech-ws states only a
	// nominal 24000 in audio.start, realtime chat-fallback deltas none: 0
	// takes what the server states, else 24000.
	PCMSampleRate int
	// TextRate, when > 0, sends speech-ws text word by word at this many
	// words per second, as an LLM feeding a TTS would; 0 sends it whole.
	TextRate float64
	// Extra is merged into session.config (speech-ws) or into
	// session.update's session.extra_body (realtime).
	Extra map[string]any
	// Headers are added to the handshake request.
	Headers map[string]string
	// Audio is the spoken input of each turn (realtime-audio), parallel to
	// Texts: 16 kHz mono PCM16 WAV clips.
	Audio []*input.Clip
	// AudioPace is how fast realtime-audio appends the input: a multiple
	// of real time (1, the default when 0, is as spoken); negative sends
	// every chunk at once.
	AudioPace float64
	// RefAudio, when set, is the voice to clone (speech-ws): session.config
	// gets it as a data: URL in "ref_audio", with RefText as "ref_text" and
	// task_type "Base" unless Extra sets one. One per session (the field takes
	// one clip); utterance 0's record counts it as its input audio.
	RefAudio *input.Clip
	RefText  string
}

// speech-ws audio modes.
const (
	SpeechStream     = "stream"     // stream_audio true, pcm: binary PCM frames
	SpeechFile       = "file"       // one binary frame holding the whole file per utterance
	SpeechTimestamps = "timestamps" // word_timestamps: base64 audio.chunk messages
)

// SpeechModes lists the speech-ws audio modes.
func SpeechModes() []string { return []string{SpeechStream, SpeechFile, SpeechTimestamps} }

// Turn is how Run hands out records: begin(i) returns the record of
// utterance or turn i, with the caller's fields (ID, Seq, Warmup, IntendedS,
// SentS, LagS) set, right before its first message is sent; end(i, rec) gets
// it back complete. Utterances never sent because the connection ended
// earlier are still handed out, failed with the session's error class and a
// message starting "not sent", unless the run was interrupted.
type Turn struct {
	Begin func(i int) *results.Record
	End   func(i int, rec *results.Record)
	// Audio, when set, gives the writer that receives the PCM of record i
	// (headers stripped) in arrival order, for saving what a listener hears.
	Audio func(i int) io.Writer
	// Text, when set, gives the writer that receives the text of record
	// i's response as it arrives (realtime: the transcript of the model's
	// speech), for scoring a transcription of its audio against.
	Text func(i int) io.Writer
}

// audioOut is t's writer for record i, or nil.
func (t Turn) audioOut(i int) io.Writer {
	if t.Audio == nil {
		return nil
	}
	return t.Audio(i)
}

// textOut is t's text writer for record i, or nil.
func (t Turn) textOut(i int) io.Writer {
	if t.Text == nil {
		return nil
	}
	return t.Text(i)
}

// addChunk records one chunk and copies its PCM to the audio sink; a
// failing sink must not fail the measurement, so its error is dropped here
// and surfaces where the caller writes the file.
//
// The chunk also goes to the record's audible-onset tracker o (s16 PCM in
// format f), as on the HTTP kinds.
func (c *Client) addChunk(o *client.Onset, f wav.Format, rec *results.Record, out io.Writer, off float64, pcm []byte) {
	client.AddChunk(rec, off, len(pcm))
	if len(pcm) > 0 && c != nil && c.fin != nil { // a bare turn (fuzz tests) has no client
		c.fin.TrackOnset(o, rec, f, pcm)
	}
	if out != nil && len(pcm) > 0 {
		_, _ = out.Write(pcm)
	}
}

// Run runs one session. It never panics and always ends every record it
// began.
func (c *Client) Run(ctx context.Context, sess Session, t Turn) {
	switch sess.Kind {
	case results.KindSpeechWS:
		c.runSpeech(ctx, sess, t)
	case results.KindRealtime:
		c.runRealtime(ctx, sess, t)
	case results.KindRealtimeAudio:
		c.runRealtimeAudio(ctx, sess, t)
	default:
		for i := range sess.Texts {
			rec := t.Begin(i)
			rec.Kind = sess.Kind
			rec.ErrorClass = results.ErrConnect
			rec.Error = fmt.Sprintf("request not sent: unknown WebSocket kind %q (want %s, %s or %s)", sess.Kind, results.KindSpeechWS, results.KindRealtime, results.KindRealtimeAudio)
			t.End(i, rec)
		}
	}
}

// failure is a classified failure: class is one of results.Err*.
type failure struct {
	class string
	err   error
	fatal bool // the connection is unusable: later utterances are not sent
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func fail(class, format string, args ...any) *failure {
	return &failure{class: class, err: fmt.Errorf(format, args...)}
}

func fatal(class, format string, args ...any) *failure {
	f := fail(class, format, args...)
	f.fatal = true
	return f
}

// noAudio is the failure of an utterance or turn that asked for audio and
// ended normally without one sample: results.ErrNoAudio, in the HTTP kinds'
// words for what came instead (client.InsteadOfAudio). The server finished
// it, so the session goes on.
func noAudio(audioEvents int, text bool) *failure {
	return fail(results.ErrNoAudio, "%s", client.InsteadOfAudio(audioEvents, text))
}

// message is one server message or the read error that ended the
// connection. Its data is buf's bytes, lent to the session until its next
// wait (conn.nextOrWake), which gives buf back to the client's pool.
type message struct {
	typ  websocket.MessageType
	data []byte
	buf  *msgBuffer
	at   time.Time
	err  error
}

// msgBuffer holds a message's bytes; the pool keeps pointers, which it
// stores without allocating.
type msgBuffer struct{ b []byte }

// bufferPool lends readers the buffers they read messages into, and takes
// them back when the session is done with the message: the client's
// messages, across its sessions, cost no allocation once the buffers
// circulate, and idle connections hold none (the pool lets the garbage
// collector have what it does not need). The zero value is ready to use.
type bufferPool struct{ pool sync.Pool }

// get is a buffer to read a message into.
func (p *bufferPool) get() *msgBuffer {
	if mb, _ := p.pool.Get().(*msgBuffer); mb != nil {
		return mb
	}
	return &msgBuffer{b: make([]byte, 0, minReadBuffer)}
}

// put takes a consumed message's buffer back, unless it grew too large to
// keep (maxScratch). A nil pool or buffer is ignored.
func (p *bufferPool) put(mb *msgBuffer) {
	if p == nil || mb == nil || cap(mb.b) > maxScratch {
		return
	}
	mb.b = mb.b[:0]
	p.pool.Put(mb)
}

// conn is one open session connection. Only the session's goroutine uses
// it, except for the reader goroutine (startReader) and the watchdog.
type conn struct {
	c *websocket.Conn
	// msgs is nil while the session reads on its own goroutine; then the
	// reader goroutine's, which cancel stops.
	msgs    chan message
	cancel  context.CancelFunc
	closed  *websocket.CloseError // the close frame, once one was seen
	readErr error                 // the read error that ended the connection
	opts    *Options
	red     *secret.Redactor // the session's (Client.redactor)
	// watch ends the waits for a message at the idle timeout and the turn's
	// deadline; unwatch stops the close of the connection when the run is
	// interrupted.
	watch   waitWatch
	unwatch func() bool
	// buffers is the client's pool messages are read into; lent is the
	// buffer of the message nextOrWake handed out last.
	buffers *bufferPool
	lent    *msgBuffer
}

// dial opens the connection with the bearer token.
func (c *Client) dial(ctx context.Context, sess Session, path string) (*conn, time.Duration, *failure) {
	u := *c.base
	p, q, _ := strings.Cut(path, "?")
	u.Path += p
	u.RawQuery = q
	h := http.Header{}
	for k, v := range sess.Headers {
		h.Set(k, v)
	}
	if c.opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	dctx, cancel := context.WithTimeout(ctx, c.opts.IdleTimeout)
	defer cancel()
	t0 := time.Now()
	// No permessage-deflate: audio does not compress, and inflating would
	// sit between the arrival of a frame and its timestamp.
	ws, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h, CompressionMode: websocket.CompressionDisabled})
	took := time.Since(t0)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, took, fatal(results.ErrCancelled, "run interrupted during the WebSocket handshake")
		case resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400:
			return nil, took, fatal(results.ErrHTTPStatus, "the server redirected the WebSocket handshake (HTTP %d) to %s: not followed",
				resp.StatusCode, redirectHost(&u, resp.Header.Get("Location")))
		case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
			f := fatal(results.ErrHTTPStatus, "WebSocket handshake refused: HTTP %d", resp.StatusCode)
			return nil, took, f
		case dctx.Err() != nil:
			return nil, took, fatal(results.ErrTimeout, "WebSocket handshake did not finish within %v", c.opts.IdleTimeout)
		}
		// The library's error may quote the URL and the server's answer.
		return nil, took, fatal(results.ErrConnect, "WebSocket handshake: %s", client.ServerText(c.redactor(sess), err.Error()))
	}
	ws.SetReadLimit(c.opts.MaxMessageBytes)
	cn := &conn{c: ws, opts: &c.opts, red: c.redactor(sess), buffers: &c.buffers}
	closeNow := func() { _ = ws.CloseNow() }
	cn.watch = newWaitWatch(c.opts.IdleTimeout, closeNow)
	// An interrupted run ends a read in progress by closing the
	// connection, once for the session rather than through the context of
	// every read: the library arms a context's cancellation for each frame
	// it reads, which costs a registration per frame (reads are given a
	// context that never ends).
	cn.unwatch = context.AfterFunc(ctx, closeNow)
	return cn, took, nil
}

// redirectHost is the host a handshake was redirected to (the Location
// resolved against the request's URL), or a description when there is none.
// Only the host is shown: a path or query may carry a token.
func redirectHost(req *url.URL, location string) string {
	if location == "" {
		return "no Location"
	}
	loc, err := req.Parse(location)
	if err != nil || loc.Host == "" {
		return "an unreadable Location"
	}
	return loc.Host
}

// readOne reads the next message into a buffer of the client's pool and
// stamps its receive time, or returns the error that ended the connection.
// A text message or a close reason that is not UTF-8 ends it with a
// violation (see checkUTF8). The read's context never ends: the watchdog,
// an interrupt and closeClient end a read by closing the connection.
func (cn *conn) readOne() message {
	typ, r, err := cn.c.Reader(context.Background())
	var mb *msgBuffer
	if err == nil {
		mb = cn.buffers.get()
		mb.b, err = readMessage(r, mb.b)
	}
	var data []byte
	if mb != nil {
		data = mb.b
	}
	err = checkUTF8(typ, data, err)
	return message{typ: typ, data: data, buf: mb, at: time.Now(), err: err}
}

// startReader hands reading to a reader goroutine for the rest of the
// session, for a wait that must end without closing the connection or wait
// for something else at the same time. A session that reads on its own
// goroutine has no message read ahead, so none is lost.
func (cn *conn) startReader() {
	if cn.msgs != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cn.msgs, cn.cancel = make(chan message, 16), cancel
	go cn.read(ctx)
}

// read delivers every message until the connection ends; the last message
// carries the error.
func (cn *conn) read(ctx context.Context) {
	defer close(cn.msgs)
	for {
		m := cn.readOne()
		select {
		case cn.msgs <- m:
		case <-ctx.Done():
			return
		}
		if m.err != nil {
			return
		}
	}
}

// readMessage reads the rest of one message into buf (from its start),
// growing it as needed, and returns it: no allocation once buf has room
// (a buffer of the client's pool, which has held messages before),
// where io.ReadAll (websocket.Conn.Read) starts from 512 bytes and
// reallocates and copies at every doubling, for every message again. The
// cap on a message is the library's read limit, which r enforces.
func readMessage(r io.Reader, buf []byte) ([]byte, error) {
	b := buf[:0]
	if cap(b) == 0 {
		b = make([]byte, 0, minReadBuffer)
	}
	var err error
	for err == nil {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
		var n int
		n, err = r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
	}
	if err == io.EOF { // the library's end of message, unwrapped as io.ReadAll expects it
		err = nil
	}
	return b, err
}

// maxScratch is the largest buffer a connection keeps for reuse: room for
// any audio chunk a streaming server sends. A larger one, grown for a rare
// large message, is left to the garbage collector rather than held for the
// whole session.
const maxScratch = 256 << 10

// minReadBuffer is the size a new reading buffer starts at: an 80 ms PCM
// chunk fits, and a realtime audio delta after one growth, rather than a
// dozen from a few bytes up.
const minReadBuffer = 4 << 10

// next waits for the next message until the idle timeout, the turn's
// deadline or ctx. The message's data is valid until the next wait.
func (cn *conn) next(ctx context.Context, deadline time.Time, events int) (message, *failure) {
	m, _, f := cn.nextOrWake(ctx, deadline, events, nil)
	return m, f
}

// nextOrWake is next that also returns (woke true, no message) when wake
// fires first: a sender pacing its messages reads the server meanwhile,
// which needs the reader goroutine (startReader). Without it the session
// reads on its own goroutine, and wake must be nil.
func (cn *conn) nextOrWake(ctx context.Context, deadline time.Time, events int, wake <-chan time.Time) (m message, woke bool, f *failure) {
	// The session is done with the message handed out before this wait.
	cn.buffers.put(cn.lent)
	cn.lent = nil
	if ctx.Err() != nil {
		return message{}, false, interrupted(events)
	}
	cn.watch.begin(deadline)
	ok := true
	if cn.msgs == nil {
		m = cn.readOne()
	} else {
		select {
		case m, ok = <-cn.msgs:
		case <-wake:
			woke = true
		case <-ctx.Done():
			f = interrupted(events)
		}
	}
	expired := cn.watch.end()
	if woke || f != nil {
		return message{}, woke, f
	}
	return cn.received(ctx, m, ok, expired, events)
}

// received is nextOrWake's answer for what it read: the message, lent to
// the session until its next wait, or the failure that ended the wait.
// expired is why the watchdog closed the connection, if it did.
func (cn *conn) received(ctx context.Context, m message, ok bool, expired expiry, events int) (message, bool, *failure) {
	if ok && m.err == nil && expired == notExpired {
		cn.lent = m.buf
		return m, false, nil
	}
	if ok {
		// A message read as the watchdog closed the connection is
		// dropped: the session cannot go on without its connection.
		cn.buffers.put(m.buf)
		cn.readErr = m.err
		if m.err == nil {
			cn.readErr = net.ErrClosed
		}
	}
	switch {
	case ctx.Err() != nil:
		// Cancelling the run closes the connection under the read,
		// and that close can come first: it is still the interrupt.
		return message{}, false, interrupted(events)
	case expired == turnExpired:
		return message{}, false, fatal(results.ErrTimeout, "the turn's deadline passed after %d messages", events)
	case expired == idleExpired:
		return message{}, false, fatal(results.ErrIdleTimeout, "no message for the idle timeout (%v), after %d messages", cn.opts.IdleTimeout, events)
	}
	return message{}, false, cn.endFailure(events)
}

// interrupted is the failure of a wait that the run's interrupt ended.
func interrupted(events int) *failure {
	return fatal(results.ErrCancelled, "run interrupted after %d messages", events)
}

// checkUTF8 turns what RFC 6455 requires a client to fail the connection
// for into a violation: a text message or a close reason that is not UTF-8.
// The library delivers both as they came (and echoes such a reason in its
// own close before the client sees it).
func checkUTF8(typ websocket.MessageType, data []byte, err error) error {
	if err == nil { // before errors.As, whose target escapes: one allocation per message
		if typ == websocket.MessageText && !utf8.Valid(data) {
			return errTextNotUTF8
		}
		return nil
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) && !utf8.ValidString(ce.Reason) {
		return errReasonNotUTF8
	}
	return err
}

// endFailure classifies the end of the connection in the middle of a turn.
func (cn *conn) endFailure(events int) *failure {
	err := cn.readErr
	if v, ok := isViolation(err); ok {
		return fatal(results.ErrMalformed, "the server broke the WebSocket protocol after %d messages: %s; the connection was failed with close code %d", events, v.reason, int(v.code))
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		cn.closed = &ce
		return fatal(results.ErrTruncated, "the server closed the connection (code %d%s) after %d messages, before the end of the turn", int(ce.Code), reasonText(cn.red, ce.Reason), events)
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return fatal(results.ErrMalformed, "a server message exceeds the cap of %d bytes (raise it with --ws-max-message-bytes); the connection was closed with 1009", cn.opts.MaxMessageBytes)
	}
	if err == nil {
		err = errors.New("connection ended")
	}
	return fatal(results.ErrTruncated, "the connection ended after %d messages, before the end of the turn: %s", events, cn.redact(err.Error()))
}

func reasonText(red *secret.Redactor, r string) string {
	if r == "" {
		return ""
	}
	return ", reason " + client.ServerText(red, r)
}

// send writes one JSON text frame with the idle timeout as its deadline.
func (cn *conn) send(ctx context.Context, p []byte) *failure {
	wctx, cancel := context.WithTimeout(ctx, cn.opts.IdleTimeout)
	defer cancel()
	if err := cn.c.Write(wctx, websocket.MessageText, p); err != nil {
		if ctx.Err() != nil {
			return fatal(results.ErrCancelled, "run interrupted while sending")
		}
		// A server that rejects a message answers with an error event and
		// closes; the client, pipelining its messages, then fails a write.
		// The server's own words are the reason, not the dead socket.
		if text, ok := cn.pendingServerError(ctx); ok {
			return fatal(results.ErrStreamError, "server error: %s; then the connection ended", text)
		}
		return fatal(results.ErrConnect, "sending a message: %s", cn.redact(err.Error()))
	}
	return nil
}

// maxErrorWait bounds the look for a server error event after a failed write.
const maxErrorWait = time.Second

// pendingServerError reads what the server sent before the connection
// ended (at most maxErrorWait) and returns the text of its error event, if
// it sent one: `{"type":"error","message":...}` on the speech stream,
// `{"type":"error","error":...}` (a string or an object with a message) on
// the realtime endpoints.
func (cn *conn) pendingServerError(ctx context.Context) (string, bool) {
	// The library leaves the connection open after a failed write: what
	// the server sent before it closed can still be read.
	cn.startReader()
	t := time.NewTimer(maxErrorWait)
	defer t.Stop()
	var text string
	found := false
	for {
		select {
		case m, ok := <-cn.msgs:
			if !ok {
				return text, found
			}
			if m.err != nil {
				// The end of the connection: keep its close frame.
				cn.readErr = m.err
				var ce websocket.CloseError
				if errors.As(m.err, &ce) {
					cn.closed = &ce
				}
				return text, found
			}
			if et, ok := serverErrorText(m.data); ok && !found {
				text, found = cn.redact(et), true
			}
		case <-t.C:
			return text, found
		case <-ctx.Done():
			return text, found
		}
	}
}

// serverErrorText extracts the text of an error event.
func serverErrorText(data []byte) (string, bool) {
	var ev struct {
		Type    string          `json:"type"`
		Message *string         `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "error" {
		return "", false
	}
	if ev.Message != nil {
		return *ev.Message, true
	}
	var s string
	if json.Unmarshal(ev.Error, &s) == nil {
		return s, true
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(ev.Error, &obj) == nil && obj.Message != "" {
		return obj.Message, true
	}
	return string(data), true
}

// maxCloseWait bounds the wait for the server's close after session.close.
const maxCloseWait = 5 * time.Second

// finish ends the connection after the client's last message: it waits (up
// to the idle timeout, at most maxCloseWait) for the server's close, then
// closes it, and returns the close frame seen, if any. An interrupted run
// (ctx done) closes at once.
func (cn *conn) finish(ctx context.Context) *websocket.CloseError {
	if ctx.Err() == nil && cn.closed == nil && cn.readErr == nil {
		cn.startReader() // the wait ends without closing the connection
		t := time.NewTimer(min(cn.opts.IdleTimeout, maxCloseWait))
	wait:
		for {
			select {
			case m, ok := <-cn.msgs:
				if !ok {
					break wait
				}
				if m.err != nil {
					cn.readErr = m.err
					var ce websocket.CloseError
					if errors.As(m.err, &ce) {
						cn.closed = &ce
					}
					break wait
				}
			case <-t.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		t.Stop()
	}
	return cn.closeClient(ctx)
}

// closeClient closes the connection from the client's side (bounded by the
// library's own 5 s close handshake) unless it already ended, and returns
// the server's close frame seen, if any. Plain realtime needs it at once:
// its server never closes a connection itself.
func (cn *conn) closeClient(ctx context.Context) *websocket.CloseError {
	if v, ok := isViolation(cn.readErr); ok && ctx.Err() == nil {
		_ = cn.c.Close(v.code, v.reason) // failing the connection, as RFC 6455 asks
	} else if ctx.Err() == nil && cn.closed == nil && cn.readErr == nil {
		_ = cn.c.Close(websocket.StatusNormalClosure, "")
	}
	cn.c.CloseNow()
	cn.unwatch()
	cn.watch.stop()
	if cn.msgs != nil {
		cn.cancel()
		for range cn.msgs {
		}
	}
	return cn.closed
}

// redact makes server text safe for a record (client.ServerText with the
// session's redactor).
func (cn *conn) redact(s string) string { return client.ServerText(cn.red, s) }

// redactor is the one redactor of a session's server text: the HTTP
// client's (the run's credentials, the API key, the base URL's and the
// proxy's) with this client's API key and base URL and the session's
// headers, every one of which the handshake sent and a server may quote.
func (c *Client) redactor(sess Session) *secret.Redactor {
	return c.fin.RedactorFor(sess.Headers).With(append(secret.FromURL(c.opts.BaseURL), c.opts.APIKey)...)
}

// setClose records the close frame on rec.
func (cn *conn) setClose(rec *results.Record, ce *websocket.CloseError) {
	if ce == nil || rec.WS == nil {
		return
	}
	rec.WS.CloseCode = int(ce.Code)
	rec.WS.CloseReason = cn.redact(ce.Reason)
}

// notSent fails the records of the utterances a dead connection never
// carried, so that planned work does not vanish from the counts.
func notSent(ctx context.Context, sess Session, t Turn, from int, f *failure, session int) {
	if ctx.Err() != nil {
		return // interrupted: these were never due
	}
	for i := from; i < len(sess.Texts); i++ {
		rec := t.Begin(i)
		rec.Kind = sess.Kind
		rec.Model = sess.Model
		rec.WS = &results.WSTurn{Session: session, Index: i}
		rec.ErrorClass = f.class
		rec.Error = fmt.Sprintf("not sent: the session's connection ended before it (%s)", f.err)
		t.End(i, rec)
	}
}
