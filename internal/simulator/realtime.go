package simulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// This file holds vLLM-Omni's duplex session as a chat-fallback session
// (docs/reference/websocket.md, sections 4 and 5): one mechanism
// (realtimeConn: the opening, the history, responses streamed as chat
// replies, playback acknowledgement, timeouts) behind two projections, the
// schemas its events take on the wire (projection).
//
// WS /v1/realtime?duplex=1 is the OpenAI-Realtime projection, this file's
// realtimeProjection: session.update opens the session,
// conversation.item.create adds user text to the history, response.create
// streams one chat reply as text deltas and audio delta events (each delta a
// whole WAV file, the chat path's audio chunk, although format says pcm16),
// ending with response.done and rate_limits.updated. A response stays active
// until a playback.ack covers it (playback policy ack_only). The audio events
// are sent in the spelling WSConfig.RealtimeEvents chooses: the OpenAI GA
// names of current servers (response.output_audio.delta and so on) or the
// older names.
//
// WS /v1/duplex is the session's native schema, with no translation
// (duplex_native.go): session.create opens it, input.text.append and
// input.commit make a turn, and the events go out as the session emits them.
// Both endpoints take the native input events (input.text.append,
// input.commit), as upstream's Realtime translator passes them through.
//
// Without duplex=1 the plain realtime endpoint (audio in,
// docs/reference/websocket.md, section 3) runs: see realtime_plain.go.

// realtimeMaxEventBytes is the largest client event a duplex session takes
// (15 MiB); a larger one gets event_too_large and the session goes on.
const realtimeMaxEventBytes = 15 << 20

// realtimeMaxPendingInput caps the input a session holds before a commit
// (16 MiB, upstream's bound on pending input audio, applied here to
// appended text); an append beyond it gets input_backpressure.
const realtimeMaxPendingInput = 16 << 20

// realtimeConn is one connection's state. Events are sent by the receive
// loop and by the response goroutine; mu orders server_event_seq with the
// writes.
type realtimeConn struct {
	s    *Server
	ctx  context.Context
	c    *websocket.Conn
	proj projection

	mu       sync.Mutex
	seq      int // last server_event_seq; counted once the session is attached
	attached bool

	id       string // session id
	model    string
	voice    string
	format   string // response_format: what the native schema's audio deltas say they hold
	pcmOut   bool   // extra_body.audio.format "pcm": raw PCM deltas instead of WAV files
	idle     time.Duration
	history  []string        // user texts and committed assistant replies
	itemPrev string          // id of the last conversation item
	epoch    int             // responses started
	input    strings.Builder // text appended since the last input.commit
	turns    int             // input commits (the native schema's turn_id)

	// policy is playback_commit_policy: under "ack_only" a response stays
	// active, blocking the next, until a playback.ack covers it; otherwise
	// it is committed when it ends. policyFixed ignores the client's.
	policy      string
	policyFixed bool

	respMu sync.Mutex
	active *realtimeResponse // until committed: by a playback.ack under ack_only, else at its end
}

// realtimeResponse is one response's reply (response.create, or an
// input.commit that starts one).
type realtimeResponse struct {
	id     string
	reply  string
	prev   string        // id of the conversation item before the assistant's
	done   chan struct{} // closed when response.done has been sent
	cancel context.CancelFunc
	acked  bool // a playback.ack came before response.done (under respMu)
	ended  bool // response.done is being sent (under respMu)

	// The session's settings when the response was created: a later
	// session.update, applied by the receive loop, changes the next one.
	voice, format   string
	pcmOut, ackOnly bool
}

// duplexQuery reports whether the duplex query value asks for the duplex
// handler (1, true or on, in any case).
func duplexQuery(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "on":
		return true
	}
	return false
}

func (s *Server) handleRealtime(w http.ResponseWriter, r *http.Request) {
	s.serveWS(w, r, func(ctx context.Context, c *websocket.Conn) {
		q := r.URL.Query()
		switch {
		case duplexQuery(q.Get("duplex")):
			s.serveDuplex(ctx, c, q, realtimeProjection{names: audioNames(s.cfg.WS.RealtimeEvents)})
		case s.cfg.DuplexOnly:
			sendUnavailable(ctx, c, plainRealtimeUnavailable()) // duplex.go
		default:
			// The plain handler, as a server whose duplex capability
			// is off for the request runs it
			// (docs/reference/websocket.md, section 1): speech in,
			// speech out.
			s.servePlainRealtime(ctx, c)
		}
	})
}

// serveDuplex runs one duplex session on c in the schema proj gives its
// events; q is the handshake's query.
func (s *Server) serveDuplex(ctx context.Context, c *websocket.Conn, q url.Values, proj projection) {
	rc := &realtimeConn{s: s, ctx: ctx, c: c, proj: proj, model: s.cfg.Model, voice: DefaultVoice, idle: s.cfg.WS.RealtimeIdleTimeout}
	rc.id = "sess-" + fmt.Sprintf("%016x", s.seq.Add(1))
	autostart := proj.defaults(rc, q)
	msgs := pumpMessages(ctx, c)
	defer rc.stopResponse()
	if rc.serve(msgs, autostart) {
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
}

// serve runs the session; it reports whether to close the socket cleanly.
func (rc *realtimeConn) serve(msgs <-chan wsMessage, autostart bool) bool {
	if autostart {
		rc.open(nil)
	} else {
		ev, clean := rc.firstEvent(msgs)
		if ev == nil {
			return clean
		}
		replay, ok := rc.proj.accept(rc, ev)
		if !ok {
			return true
		}
		if replay {
			if cont, open := rc.event(ev.raw); !cont {
				return open
			}
		}
	}
	for {
		m := nextMessage(rc.ctx, msgs, rc.idle)
		var to errWSTimeout
		switch {
		case errors.As(m.err, &to):
			rc.proj.relay(rc, map[string]any{"type": "session.closed", "session_id": rc.id, "reason": "timeout"})
			return true
		case m.err != nil:
			return false
		case m.typ != websocket.MessageText:
			// Starlette's receive_text() fails on a binary frame and the
			// reader task dies; the simulator ends the session.
			return true
		}
		if cont, open := rc.event(m.data); !cont {
			return open
		}
	}
}

// firstEvent waits for the session's first client event. A nil event ends
// the session; clean then reports whether to close the socket cleanly.
func (rc *realtimeConn) firstEvent(msgs <-chan wsMessage) (ev *realtimeEvent, clean bool) {
	m := nextMessage(rc.ctx, msgs, rc.s.cfg.WS.RealtimeFirstTimeout)
	var to errWSTimeout
	switch {
	case errors.As(m.err, &to):
		rc.sendError("config_timeout", "Timeout waiting for session.create", "")
		return nil, true
	case m.err != nil:
		return nil, false
	case m.typ != websocket.MessageText:
		return nil, true
	}
	ev, err := parseRealtimeEvent(m.data)
	if err != nil {
		rc.sendError("invalid_json", "Invalid JSON", "")
		return nil, true
	}
	return ev, true
}

// realtimeEvent is what the simulator reads of a client event.
type realtimeEvent struct {
	Type      string          `json:"type"`
	EventID   string          `json:"event_id"`
	SessionID string          `json:"session_id"` // session.create's
	Session   json.RawMessage `json:"session"`
	Item      json.RawMessage `json:"item"`
	Response  json.RawMessage `json:"response"`

	Text           string `json:"text"`            // input.text.append's
	ResponseCreate *bool  `json:"response_create"` // input.commit's; absent means true

	ResponseID  string  `json:"response_id"`
	PlayedMS    float64 `json:"played_ms"`
	CommittedMS float64 `json:"committed_ms"`
	ItemID      string  `json:"item_id"`

	raw []byte
}

func parseRealtimeEvent(data []byte) (*realtimeEvent, error) {
	var ev realtimeEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, err
	}
	ev.raw = data
	return &ev, nil
}

// realtimeSessionUpdate holds the session.update fields the simulator reads.
type realtimeSessionUpdate struct {
	Model                *string          `json:"model"`
	Voice                *string          `json:"voice"`
	OutputAudioFormat    *json.RawMessage `json:"output_audio_format"`
	ResponseFormat       *json.RawMessage `json:"response_format"`
	TurnDetection        json.RawMessage  `json:"turn_detection"`
	IdleTimeoutS         *float64         `json:"idle_timeout_s"`
	SessionID            *string          `json:"session_id"`
	PlaybackCommitPolicy *string          `json:"playback_commit_policy"`
	ExtraBody            map[string]any   `json:"extra_body"`
}

// parseSessionUpdate reads a session.update payload (in "session", or
// top-level). A refused update returns the error code and message.
func parseSessionUpdate(ev *realtimeEvent) (u realtimeSessionUpdate, code, msg string) {
	src := []byte(ev.Session)
	if len(src) == 0 || string(src) == "null" {
		src = ev.raw
	}
	if err := json.Unmarshal(src, &u); err != nil {
		return u, "invalid_request_error", "Invalid session.update: " + err.Error()
	}
	if t := strings.TrimSpace(string(u.TurnDetection)); t != "" && t != "null" {
		return u, "unsupported_turn_detection", "turn_detection is not supported; send \"turn_detection\": null"
	}
	for _, raw := range []*json.RawMessage{u.OutputAudioFormat, u.ResponseFormat} {
		if raw == nil {
			continue
		}
		var f string
		if json.Unmarshal(*raw, &f) != nil || !outputAudioFormat(f) {
			return u, "unsupported_audio_format", "Unsupported output audio format: " + string(*raw)
		}
	}
	return u, "", ""
}

// outputAudioFormat reports whether f is an output format duplex sessions accept.
func outputAudioFormat(f string) bool {
	switch f {
	case "pcm16", "pcm_s16le", "s16le", "wav", "pcm", "g711_ulaw", "g711_alaw":
		return true
	}
	return false
}

// applyUpdate applies a session.update; it reports false (after sending
// the error) when the update was refused.
func (rc *realtimeConn) applyUpdate(ev *realtimeEvent) bool {
	u, code, msg := parseSessionUpdate(ev)
	if code != "" {
		rc.sendError(code, msg, ev.EventID)
		return false
	}
	if u.Model != nil && *u.Model != "" {
		if e := rc.s.checkModel(*u.Model); e != nil {
			rc.sendError("model_not_found", e.Message, ev.EventID)
			return false
		}
		rc.model = *u.Model
	}
	if u.Voice != nil {
		rc.voice = *u.Voice
	}
	if u.IdleTimeoutS != nil && *u.IdleTimeoutS > 0 {
		rc.idle = time.Duration(*u.IdleTimeoutS * float64(time.Second))
	}
	if u.SessionID != nil && *u.SessionID != "" && !rc.attached {
		rc.id = *u.SessionID
	}
	if a, ok := u.ExtraBody["audio"].(map[string]any); ok {
		rc.pcmOut = a["format"] == "pcm"
	}
	if u.ResponseFormat != nil {
		_ = json.Unmarshal(*u.ResponseFormat, &rc.format) // checked by parseSessionUpdate
	}
	if u.PlaybackCommitPolicy != nil && !rc.policyFixed {
		rc.policy = *u.PlaybackCommitPolicy
	}
	return true
}

// open opens the session with the configuring event ev (nil: a default
// session) and announces it. It reports false when the configuration was
// refused.
func (rc *realtimeConn) open(ev *realtimeEvent) bool {
	if ev != nil && !rc.applyUpdate(ev) {
		return false
	}
	rc.proj.opened(rc, ev != nil)
	return true
}

// send writes one server event with its envelope: event_id when the
// projection stamps one, server_event_seq on every event after
// session.created.
func (rc *realtimeConn) send(ev map[string]any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.proj.eventIDs() {
		ev["event_id"] = fmt.Sprintf("event_%032x", rc.s.seq.Add(1))
	}
	if rc.attached {
		rc.seq++
		ev["server_event_seq"] = rc.seq
	} else if ev["type"] == "session.created" {
		rc.attached = true
	}
	_ = writeJSONWS(rc.ctx, rc.c, ev) // a client gone shows on the next read
}

// sendError sends an error in the projection's shape; clientEventID is the
// event_id of the client event it answers, if any.
func (rc *realtimeConn) sendError(code, msg, clientEventID string) {
	rc.send(rc.proj.errorEvent(code, msg, clientEventID))
}

// event handles one client event after the session opened.
func (rc *realtimeConn) event(data []byte) (cont, open bool) {
	if len(data) > realtimeMaxEventBytes {
		rc.sendError("event_too_large", fmt.Sprintf("event of %d bytes exceeds the %d byte limit", len(data), realtimeMaxEventBytes), "")
		return true, true
	}
	ev, err := parseRealtimeEvent(data)
	if err != nil {
		rc.sendError("invalid_json", "Invalid JSON", "")
		return true, true
	}
	if rc.proj.clientEvent(rc, ev) {
		return true, true
	}
	switch ev.Type {
	case "session.update":
		if rc.applyUpdate(ev) {
			rc.proj.updated(rc)
		}
	case "input.text.append", "input_text.append", "push_text":
		if rc.input.Len()+len(ev.Text) > realtimeMaxPendingInput {
			rc.sendError("input_backpressure", fmt.Sprintf("pending input would exceed %d bytes; commit it first", realtimeMaxPendingInput), ev.EventID)
			break
		}
		rc.input.WriteString(ev.Text)
	case "input.commit":
		rc.commitInput(ev)
	case "response.create":
		rc.responseCreate(ev)
	case "response.cancel":
		rc.respMu.Lock()
		if a := rc.active; a != nil {
			a.cancel()
		}
		rc.respMu.Unlock()
	case "playback.ack", "audio.playback_ack":
		rc.playbackAck(ev)
	case "session.heartbeat":
		rc.send(map[string]any{"type": "session.heartbeat_ack", "session_id": rc.id})
	case "session.event_ack":
	case "session.close", "close", "close_session":
		rc.stopResponse()
		rc.proj.relay(rc, map[string]any{"type": "session.closed", "session_id": rc.id})
		return false, true
	default:
		rc.sendError("unknown_event", "Unknown event type: "+ev.Type, ev.EventID)
	}
	return true, true
}

// realtimeItem is a conversation item as the client sends it.
type realtimeItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// parseItem reads a conversation.item.create's item and its text parts.
func parseItem(ev *realtimeEvent) (it realtimeItem, texts []string, ok bool) {
	if len(ev.Item) == 0 || json.Unmarshal(ev.Item, &it) != nil || it.Type != "message" {
		return it, nil, false
	}
	for _, p := range it.Content {
		if p.Type == "input_text" || p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return it, texts, true
}

func (rc *realtimeConn) itemCreate(ev *realtimeEvent) {
	it, texts, ok := parseItem(ev)
	if !ok {
		rc.sendError("invalid_request_error", "conversation.item.create requires an item of type message", ev.EventID)
		return
	}
	if it.ID == "" {
		it.ID = fmt.Sprintf("item_%016x", rc.s.seq.Add(1))
	}
	if it.Role == "" {
		it.Role = "user"
	}
	rc.addHistory(strings.Join(texts, " "))
	rc.sendItem(it.ID, it.Role, json.RawMessage(contentJSON(ev.Item)))
}

// addHistory appends a user message to the history and returns its length.
func (rc *realtimeConn) addHistory(text string) int {
	rc.respMu.Lock() // a finishing response commits its reply to the history too
	defer rc.respMu.Unlock()
	rc.history = append(rc.history, text)
	return len(rc.history)
}

// sendItem announces a conversation item (Realtime projection).
func (rc *realtimeConn) sendItem(id, role string, content json.RawMessage) {
	item := map[string]any{"id": id, "type": "message", "role": role, "object": "realtime.item", "status": "completed", "content": content}
	prev := any(nil)
	if rc.itemPrev != "" {
		prev = rc.itemPrev
	}
	for _, t := range []string{"conversation.item.added", "conversation.item.created", "conversation.item.done"} {
		rc.send(map[string]any{"type": t, "previous_item_id": prev, "item": item})
	}
	rc.itemPrev = id
}

// commitInput commits the text appended since the last commit as a user
// message and, unless the commit says response_create false, starts a
// response over the history.
func (rc *realtimeConn) commitInput(ev *realtimeEvent) {
	text := rc.input.String()
	rc.input.Reset()
	rc.proj.committed(rc, text, rc.turns, rc.addHistory(text))
	rc.turns++
	if ev.ResponseCreate == nil || *ev.ResponseCreate {
		rc.responseCreate(ev)
	}
}

// contentJSON returns the item's content array as sent.
func contentJSON(item json.RawMessage) []byte {
	var v struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(item, &v) != nil || len(v.Content) == 0 {
		return []byte("[]")
	}
	return v.Content
}

func (rc *realtimeConn) responseCreate(ev *realtimeEvent) {
	rc.respMu.Lock()
	defer rc.respMu.Unlock()
	if rc.active != nil {
		rc.sendError("response_already_active", "response.create cannot reserve options while another response is active.", ev.EventID)
		return
	}
	reply := defaultReply
	for i := len(rc.history) - 1; i >= 0; i-- {
		if strings.TrimSpace(rc.history[i]) != "" {
			reply = rc.history[i]
			break
		}
	}
	id := fmt.Sprintf("resp-%s-%d-%08x", rc.id, rc.epoch, uint32(rc.s.seq.Add(1)))
	ctx, cancel := context.WithCancel(rc.ctx)
	r := &realtimeResponse{id: id, reply: reply, prev: rc.itemPrev, done: make(chan struct{}), cancel: cancel,
		voice: rc.voice, format: rc.format, pcmOut: rc.pcmOut, ackOnly: rc.policy == "ack_only"}
	rc.active = r
	epoch := rc.epoch
	rc.epoch++
	prompt := strings.Join(rc.history, "\n")
	go func() {
		defer cancel()
		rc.respond(ctx, r, epoch, prompt)
		close(r.done)
	}()
}

// stopResponse cancels a running response and waits for it.
func (rc *realtimeConn) stopResponse() {
	rc.respMu.Lock()
	a := rc.active
	rc.respMu.Unlock()
	if a != nil {
		a.cancel()
		<-a.done
	}
}

func (rc *realtimeConn) playbackAck(ev *realtimeEvent) {
	rc.respMu.Lock()
	if a := rc.active; a != nil && a.id == ev.ResponseID {
		if a.ended {
			rc.commit(a)
		} else {
			a.acked = true // committed when response.done goes out
		}
	}
	rc.respMu.Unlock()
	rc.proj.relay(rc, map[string]any{"type": "playback.acknowledged", "session_id": rc.id, "item_id": ev.ItemID,
		"played_ms": ev.PlayedMS, "committed_ms": ev.CommittedMS, "truncate": false, "history_committed": true})
}

// commit ends an acknowledged response: it no longer blocks the next
// response.create, and its reply joins the history. The caller holds respMu.
func (rc *realtimeConn) commit(r *realtimeResponse) {
	if rc.active == r {
		rc.active = nil
		rc.history = append(rc.history, r.reply)
	}
}

// realtimeStream is one response's state while its chat reply streams.
type realtimeStream struct {
	rc     *realtimeConn
	r      *realtimeResponse
	j      *job
	ctx    context.Context
	epoch  int
	itemID string
	format wav.Format

	text        strings.Builder
	textStarted bool      // the Realtime projection's text part was announced
	pcm, file   []byte    // reused render and WAV buffers
	arrivals    []float64 // the server's clock of each audio chunk
	pcmBytes    []int
}

// respond streams one chat-fallback response (9.4.4).
func (rc *realtimeConn) respond(ctx context.Context, r *realtimeResponse, epoch int, prompt string) {
	s := rc.s
	j := s.newJob(ctx, time.Now(), jobSpec{
		endpoint:  "chat",
		key:       prompt,
		words:     strings.Fields(r.reply),
		textOn:    true,
		audioOn:   true,
		audioText: r.reply,
		voice:     r.voice,
		speed:     1,
		promptTok: promptTokens(utf8.RuneCountInString(prompt)),
	})
	defer j.release()
	st := &realtimeStream{rc: rc, r: r, j: j, ctx: ctx, epoch: epoch, itemID: "item_" + r.id, format: s.wavFormat()}
	rc.proj.begin(st)
	if j.plan.faults.http500 {
		j.fail()
		rc.sendError("internal_error", "simulated internal server error (fault injection: --fault-500)", "")
		st.finish("failed")
		return
	}
	// Each response is a streaming chat completion upstream: the chat path's
	// TTFP and continuity families record it, on the server's clock.
	err := j.run(st.event)
	switch {
	case err == nil:
	case errors.Is(err, errFaultEvent):
		j.fail()
		// A mid-stream chat error is an internal event of its own, which
		// the Realtime projection forwards as an unknown one.
		rc.proj.relay(rc, map[string]any{"type": "response.message", "session_id": rc.id, "response_id": r.id,
			"error": map[string]any{"message": "simulated mid-stream error (fault injection: --fault-error-event)", "type": "server_error"}})
		st.finish("failed")
		return
	case errors.Is(err, errFaultDisconnect):
		j.fail()
		rc.c.CloseNow()
		return
	case rc.ctx.Err() != nil:
		j.fail()
		return // the connection is gone
	default:
		j.fail()
		st.finish("cancelled") // response.cancel
		return
	}
	s.metrics.AudioStreamingFinalize(j.finalSR(), st.arrivals, st.pcmBytes, s.cfg.SampleRate)
	j.succeed()
	st.finish("completed")
}

// event sends one event of the chat reply: a text delta or an audio delta.
func (st *realtimeStream) event(ev *event) error {
	rc, j := st.rc, st.j
	if !ev.audio {
		st.text.WriteString(ev.word)
		rc.proj.text(st, ev.word)
		return st.ctx.Err()
	}
	st.pcm = j.render(st.pcm[:0], ev)
	payload := st.pcm
	if !st.r.pcmOut {
		// The chat path's audio chunk is a whole WAV file (9.4.5).
		st.file = wav.AppendHeader(st.file[:0], st.format, uint32(len(st.pcm)))
		st.file = append(st.file, st.pcm...)
		payload = st.file
	}
	at := j.elapsed()
	if len(st.arrivals) == 0 {
		rc.s.metrics.AudioFirstPacket(j.finalSR(), at)
	}
	st.arrivals = append(st.arrivals, at)
	st.pcmBytes = append(st.pcmBytes, len(st.pcm))
	rc.proj.audio(st, string(appendBase64(make([]byte, 0, base64.StdEncoding.EncodedLen(len(payload))), payload, ev.corrupt)))
	return st.ctx.Err()
}

// finish ends the response with status (completed, failed or cancelled):
// it is committed now unless the session waits for a playback.ack, and the
// projection sends its end.
func (st *realtimeStream) finish(status string) {
	rc, r := st.rc, st.r
	// From here a playback.ack commits the response: the client may
	// answer response.done before this goroutine has sent its last event.
	rc.respMu.Lock()
	r.ended = true
	if r.acked || !r.ackOnly {
		rc.commit(r)
	}
	rc.respMu.Unlock()
	rc.proj.end(st, status)
}

// doneEvent is the session's own event at the end of a response: the native
// schema's response.done, and the metadata of the Realtime one.
func (st *realtimeStream) doneEvent(status string) map[string]any {
	return map[string]any{"type": "response.done", "session_id": st.rc.id, "response_id": st.r.id, "epoch": st.epoch,
		"committed": status == "completed", "playback": st.playback()}
}

// playback is the session's playback ledger at response.done: the audio
// generated and sent; none of it played or committed until a playback.ack.
func (st *realtimeStream) playback() map[string]any {
	var bytes int
	for _, n := range st.pcmBytes {
		bytes += n
	}
	ms := 0.0
	if perS := st.format.BytesPerFrame() * st.format.SampleRate; perS > 0 {
		ms = float64(bytes) * 1000 / float64(perS)
	}
	return map[string]any{"generated_ms": ms, "sent_ms": ms, "played_ms": 0, "committed_ms": 0}
}

// projection is the schema a duplex session's events take on the wire: the
// OpenAI-Realtime one of /v1/realtime?duplex=1 (realtimeProjection) or the
// session's native one of /v1/duplex (nativeProjection, duplex_native.go).
// The session calls it at each of its outputs; it sends them with rc.send.
type projection interface {
	// defaults sets the session's defaults from the handshake's query and
	// reports whether the session opens at once, before any client event.
	defaults(rc *realtimeConn, q url.Values) (autostart bool)
	// accept handles the first client event: it opens the session
	// (rc.open) or refuses the event. replay asks for the event to be
	// handled as a later one too; ok false ends the session.
	accept(rc *realtimeConn, ev *realtimeEvent) (replay, ok bool)
	// clientEvent handles a client event only this schema has; it reports
	// false for every other.
	clientEvent(rc *realtimeConn, ev *realtimeEvent) bool
	// eventIDs reports whether every server event carries an event_id.
	eventIDs() bool
	// errorEvent is an error in the schema's shape.
	errorEvent(code, msg, clientEventID string) map[string]any

	opened(rc *realtimeConn, byUpdate bool) // the session opened
	updated(rc *realtimeConn)               // a later session.update was applied
	// committed: input.commit made the user message text turn turnID, and
	// the history holds historyLen messages.
	committed(rc *realtimeConn, text string, turnID, historyLen int)
	begin(st *realtimeStream)                  // a response starts
	text(st *realtimeStream, delta string)     // its text delta
	audio(st *realtimeStream, b64 string)      // its audio delta, base64
	end(st *realtimeStream, status string)     // it ended (completed, failed or cancelled)
	relay(rc *realtimeConn, ev map[string]any) // any other event of the session, as the session emits it
}

// Spellings of the duplex session's audio events (WSConfig.RealtimeEvents).
// Current servers send the OpenAI GA names; release 0.28.0 and older send
// the names the Realtime beta used.
const (
	RealtimeEventsGA     = "ga"
	RealtimeEventsLegacy = "legacy"
)

// realtimeAudioNames are the audio events of one spelling. A chat-fallback
// response never sends the transcript's done event (its transcript stays
// empty), so it has no name here.
type realtimeAudioNames struct {
	delta, transcriptDelta, done string
}

func audioNames(spelling string) realtimeAudioNames {
	if spelling == RealtimeEventsLegacy {
		return realtimeAudioNames{"response.audio.delta", "response.audio_transcript.delta", "response.audio.done"}
	}
	return realtimeAudioNames{"response.output_audio.delta", "response.output_audio_transcript.delta", "response.output_audio.done"}
}

// realtimeProjection is the OpenAI-Realtime schema of /v1/realtime?duplex=1,
// its audio events named in one spelling.
type realtimeProjection struct {
	names realtimeAudioNames
}

// defaults: a model in the query opens a default session at once, and
// session_id names it. The playback policy is ack_only, whatever the client
// asks.
func (realtimeProjection) defaults(rc *realtimeConn, q url.Values) bool {
	if sid := q.Get("session_id"); sid != "" {
		rc.id = sid
	}
	rc.format, rc.policy, rc.policyFixed = "pcm16", "ack_only", true
	return q.Get("model") != ""
}

// accept: a first session.update configures the session; any other first
// event opens a default one and is then handled.
func (realtimeProjection) accept(rc *realtimeConn, ev *realtimeEvent) (replay, ok bool) {
	if ev.Type == "session.update" {
		return false, rc.open(ev)
	}
	rc.open(nil)
	return true, true
}

func (realtimeProjection) clientEvent(rc *realtimeConn, ev *realtimeEvent) bool {
	if ev.Type != "conversation.item.create" {
		return false
	}
	rc.itemCreate(ev)
	return true
}

func (realtimeProjection) eventIDs() bool { return true }

// errorEvent is the Realtime error object; its type comes from the code.
func (realtimeProjection) errorEvent(code, msg, clientEventID string) map[string]any {
	typ := "invalid_request_error"
	switch code {
	case "duplex_session_busy", "resource_exhausted":
		typ = "rate_limit_error"
	case "internal_error", "server_error":
		typ = "server_error"
	}
	e := map[string]any{"type": typ, "code": code, "message": msg}
	if clientEventID != "" {
		e["event_id"] = clientEventID
	}
	return map[string]any{"type": "error", "error": e}
}

// opened: session.created, plus session.updated when a session.update
// opened the session.
func (p realtimeProjection) opened(rc *realtimeConn, byUpdate bool) {
	rc.send(map[string]any{"type": "session.created", "session": p.sessionObject(rc)})
	if byUpdate {
		p.updated(rc)
	}
}

func (p realtimeProjection) updated(rc *realtimeConn) {
	rc.send(map[string]any{"type": "session.updated", "session": p.sessionObject(rc)})
}

func (realtimeProjection) sessionObject(rc *realtimeConn) map[string]any {
	return map[string]any{
		"object": "realtime.session", "type": "realtime", "id": rc.id, "state": "open", "model": rc.model,
		"response_format": "pcm", "input_audio_format": "pcm16", "output_audio_format": "pcm16",
		"modalities": []string{"audio", "text"}, "output_modalities": []string{"audio", "text"},
		"turn_detection": nil, "idle_timeout_s": rc.idle.Seconds(), "playback_commit_policy": rc.policy,
	}
}

// committed: the user message is a conversation item.
func (realtimeProjection) committed(rc *realtimeConn, text string, _, _ int) {
	content, _ := json.Marshal([]map[string]string{{"type": "input_text", "text": text}}) // strings always encode
	rc.sendItem(fmt.Sprintf("item_%016x", rc.s.seq.Add(1)), "user", content)
}

// ids adds the ids every event about the assistant item carries.
func (realtimeProjection) ids(st *realtimeStream, m map[string]any) map[string]any {
	m["response_id"], m["item_id"], m["output_index"] = st.r.id, st.itemID, 0
	return m
}

// response is the response object of response.created and response.done.
func (realtimeProjection) response(st *realtimeStream, status string, output []any) map[string]any {
	return map[string]any{"id": st.r.id, "object": "realtime.response", "status": status, "status_details": nil,
		"output": output, "modalities": []string{"audio", "text"}}
}

// item is the assistant item with what it holds so far.
func (realtimeProjection) item(st *realtimeStream, status string) map[string]any {
	return map[string]any{"id": st.itemID, "object": "realtime.item", "type": "message", "role": "assistant", "status": status,
		"content": []any{map[string]any{"type": "output_audio", "transcript": ""}, map[string]any{"type": "output_text", "text": st.text.String()}}}
}

// begin sends the events that open a response, up to its audio part.
func (p realtimeProjection) begin(st *realtimeStream) {
	rc, r := st.rc, st.r
	rc.send(map[string]any{"type": "response.created", "response_id": r.id, "response": p.response(st, "in_progress", []any{})})
	item := map[string]any{"id": st.itemID, "object": "realtime.item", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}
	for _, t := range []string{"conversation.item.added", "conversation.item.created"} {
		rc.send(map[string]any{"type": t, "previous_item_id": r.prev, "item": item})
	}
	rc.send(map[string]any{"type": "response.output_item.added", "response_id": r.id, "output_index": 0, "item": item})
	rc.send(p.ids(st, map[string]any{"type": "response.content_part.added", "content_index": 0, "part": map[string]any{"type": "audio", "transcript": ""}}))
}

// text sends a text delta, announcing the text part first.
func (p realtimeProjection) text(st *realtimeStream, delta string) {
	if !st.textStarted {
		st.textStarted = true
		st.rc.send(p.ids(st, map[string]any{"type": "response.content_part.added", "content_index": 1, "part": map[string]any{"type": "text", "text": ""}}))
	}
	st.rc.send(p.ids(st, map[string]any{"type": "response.output_text.delta", "content_index": 1, "delta": delta}))
}

// audio sends an audio delta, followed by its empty transcript delta.
func (p realtimeProjection) audio(st *realtimeStream, b64 string) {
	rc := st.rc
	rc.send(p.ids(st, map[string]any{"type": p.names.delta, "content_index": 0, "delta": b64, "format": "pcm16",
		"metadata": map[string]any{"session_id": rc.id, "epoch": st.epoch}}))
	rc.send(p.ids(st, map[string]any{"type": p.names.transcriptDelta, "content_index": 0, "delta": ""}))
}

// end closes a completed response's parts and item, then sends
// response.done and rate_limits.updated. As upstream's, the response object
// carries the assistant item in output and the session's own done event as
// its metadata.
func (p realtimeProjection) end(st *realtimeStream, status string) {
	rc, r := st.rc, st.r
	if status == "completed" {
		text := st.text.String()
		rc.send(p.ids(st, map[string]any{"type": p.names.done, "content_index": 0}))
		rc.send(p.ids(st, map[string]any{"type": "response.content_part.done", "content_index": 0, "part": map[string]any{"type": "audio", "transcript": ""}}))
		rc.send(p.ids(st, map[string]any{"type": "response.output_text.done", "content_index": 1, "text": text}))
		rc.send(p.ids(st, map[string]any{"type": "response.content_part.done", "content_index": 1, "part": map[string]any{"type": "text", "text": text}}))
		done := p.item(st, "completed")
		rc.send(map[string]any{"type": "response.output_item.done", "response_id": r.id, "output_index": 0, "item": done})
		rc.send(map[string]any{"type": "conversation.item.done", "previous_item_id": r.prev, "item": done})
	}
	itemStatus := "completed"
	if status != "completed" {
		itemStatus = "incomplete"
	}
	resp := p.response(st, status, []any{p.item(st, itemStatus)})
	resp["metadata"] = st.doneEvent(status)
	rc.send(map[string]any{"type": "response.done", "response_id": r.id, "response": resp})
	rc.send(map[string]any{"type": "rate_limits.updated", "rate_limits": []any{}})
}

// relay sends a session event the projection has no Realtime name for
// inside an "event" field: session.closed and playback.acknowledged under
// their own type, any other under "duplex.<type>".
func (realtimeProjection) relay(rc *realtimeConn, ev map[string]any) {
	typ, _ := ev["type"].(string)
	switch typ {
	case "session.closed", "playback.acknowledged":
	default:
		typ = "duplex." + typ
	}
	rc.send(map[string]any{"type": typ, "event": ev})
}
