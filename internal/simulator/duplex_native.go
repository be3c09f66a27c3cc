package simulator

import (
	"fmt"
	"net/url"
)

// This file is the native schema of the duplex session, which WS /v1/duplex
// speaks (docs/reference/websocket.md, section 5): the session of
// realtime.go with no OpenAI-Realtime translation. The first client event
// must be session.create (or its aliases open_session and session.config);
// events go out as the session emits them, with server_event_seq after
// session.created and no event_id; errors are flat. A text turn is
// input.text.append and input.commit, answered by input.committed,
// response.created, response.text.delta and response.output_audio.delta
// (field "audio"), and response.done. Unlike the Realtime projection's, the
// playback policy is the client's (default commit_all_on_done): a response
// is committed to the history when it ends, with no playback.ack needed.

// defaultNativeFormat and defaultNativePolicy are session.create's
// defaults for response_format and playback_commit_policy.
const (
	defaultNativeFormat = "wav"
	defaultNativePolicy = "commit_all_on_done"
)

// nativeProjection is the native schema of /v1/duplex.
type nativeProjection struct{}

// defaults: a native session never opens before its session.create.
func (nativeProjection) defaults(rc *realtimeConn, _ url.Values) bool {
	rc.format, rc.policy = defaultNativeFormat, defaultNativePolicy
	return false
}

// accept opens the session on session.create (or an alias); any other
// first event ends it with an error.
func (nativeProjection) accept(rc *realtimeConn, ev *realtimeEvent) (replay, ok bool) {
	switch ev.Type {
	case "session.create", "open_session", "session.config":
		if ev.SessionID != "" {
			rc.id = ev.SessionID
		}
		return false, rc.open(ev)
	case "session.resume":
		rc.sendError("unsupported_session_resume", "session.resume is not supported on this endpoint", ev.EventID)
	default:
		rc.sendError("bad_event", "Expected session.create, got: "+ev.Type, ev.EventID)
	}
	return false, false
}

func (nativeProjection) clientEvent(*realtimeConn, *realtimeEvent) bool { return false }

func (nativeProjection) eventIDs() bool { return false }

// errorEvent is the flat error: the message in "error", the code beside it.
func (nativeProjection) errorEvent(code, msg, _ string) map[string]any {
	return map[string]any{"type": "error", "error": msg, "code": code}
}

func (p nativeProjection) opened(rc *realtimeConn, _ bool) {
	rc.send(map[string]any{"type": "session.created", "session": p.sessionObject(rc)})
}

func (p nativeProjection) updated(rc *realtimeConn) {
	rc.send(map[string]any{"type": "session.updated", "session": p.sessionObject(rc)})
}

func (nativeProjection) sessionObject(rc *realtimeConn) map[string]any {
	return map[string]any{
		"id": rc.id, "state": "open", "model": rc.model, "response_format": rc.format,
		"modalities": []string{"audio", "text"}, "voice": rc.voice,
		"idle_timeout_s": rc.idle.Seconds(), "playback_commit_policy": rc.policy,
	}
}

func (nativeProjection) committed(rc *realtimeConn, text string, turnID, historyLen int) {
	rc.send(map[string]any{"type": "input.committed", "session_id": rc.id, "turn_id": turnID, "epoch": rc.epoch,
		"history_len": historyLen, "message": map[string]any{"role": "user", "content": text}})
}

// event is one event about the response, with the ids each carries.
func (nativeProjection) event(st *realtimeStream, typ string) map[string]any {
	return map[string]any{"type": typ, "session_id": st.rc.id, "response_id": st.r.id, "epoch": st.epoch}
}

func (p nativeProjection) begin(st *realtimeStream) {
	ev := p.event(st, "response.created")
	ev["modalities"] = []string{"audio", "text"}
	ev["request_id"] = fmt.Sprintf("chatcmpl-duplex-%s-%d", st.rc.id, st.epoch)
	st.rc.send(ev)
}

func (p nativeProjection) text(st *realtimeStream, delta string) {
	ev := p.event(st, "response.text.delta")
	ev["delta"] = delta
	st.rc.send(ev)
}

// audio sends an audio delta; format names the session's response_format
// (the bytes are the chat path's chunk, as on the Realtime projection).
func (p nativeProjection) audio(st *realtimeStream, b64 string) {
	ev := p.event(st, "response.output_audio.delta")
	ev["audio"], ev["format"] = b64, st.r.format
	st.rc.send(ev)
}

// end sends the session's own response.done.
func (nativeProjection) end(st *realtimeStream, status string) {
	st.rc.send(st.doneEvent(status))
}

func (nativeProjection) relay(rc *realtimeConn, ev map[string]any) { rc.send(ev) }
