package wsclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/jsonscan"
)

// realtimeEvent is what the client uses of a Realtime server event. Its
// byte slices alias the message they were read from, which the connection
// lends until the session's next wait (conn.nextOrWake): the event is
// consumed before then, and what outlives it (the response id) is copied.
type realtimeEvent struct {
	typ        string
	responseID []byte  // the top-level response_id, else response.id
	status     string  // response.status
	delta      []byte  // "delta": base64 audio or text
	audio      []byte  // "audio": the plain endpoint's audio field
	rate       int     // sample_rate_hz when positive, else 0
	durMS      float64 // metadata.audio_duration_ms, when hasDur
	hasDur     bool
	// The error paths' fields, read by encoding/json only: the hand reader
	// leaves any event that has them to it.
	errorRaw json.RawMessage
	code     *string
	event    json.RawMessage
}

// audioB64 is the delta's audio: "delta", else "audio".
func (ev *realtimeEvent) audioB64() []byte {
	if len(ev.delta) > 0 {
		return ev.delta
	}
	return ev.audio
}

// parseRealtimeEvent reads one server event into ev: by readRealtimeEvent
// when it takes the message, else by encoding/json (realtimeMsg), which
// gives the same event wherever the hand reader takes one.
func parseRealtimeEvent(data []byte, ev *realtimeEvent) error {
	if !readRealtimeEvent(data, ev) {
		var m realtimeMsg
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("not a Realtime event: %w", err)
		}
		*ev = eventFromMsg(&m)
	}
	if ev.typ == "" {
		return errors.New("event without a type")
	}
	return nil
}

// eventFromMsg is the event encoding/json decoded, in the client's terms.
func eventFromMsg(m *realtimeMsg) realtimeEvent {
	ev := realtimeEvent{typ: m.Type, errorRaw: m.Error, code: m.Code, event: m.Event}
	if rid := m.responseID(); rid != "" {
		ev.responseID = []byte(rid)
	}
	if m.Response != nil {
		ev.status = m.Response.Status
	}
	if m.Delta != nil {
		ev.delta = []byte(*m.Delta)
	}
	if m.Audio != nil {
		ev.audio = []byte(*m.Audio)
	}
	if m.SampleRateHz != nil && *m.SampleRateHz > 0 {
		ev.rate = *m.SampleRateHz
	}
	if m.Metadata != nil && m.Metadata.AudioDurationMS != nil {
		ev.durMS, ev.hasDur = *m.Metadata.AudioDurationMS, true
	}
	return ev
}

// The members readRealtimeEvent reads, as bits of the set of members seen.
const (
	fieldType = 1 << iota
	fieldResponseID
	fieldDelta
	fieldAudio
	fieldRate
	fieldMetadata
	fieldDuration // metadata.audio_duration_ms
)

// maxSkipDepth bounds the nesting of a member's value; a deeper one is
// left to encoding/json.
const maxSkipDepth = 64

// readRealtimeEvent is the hand-written reader of the events a turn is made
// of (audio and transcript deltas above all): one pass over the message
// with package jsonscan's walk, the payload left in place, no allocation
// for the event types the client knows. It takes a message (true) only
// when it can tell exactly what json.Unmarshal into realtimeMsg would
// give: a JSON object whose members it reads are spelled exactly, each
// once, with values of their type, strings that stand for themselves (no
// escape, valid UTF-8), and no member of the error paths (response, error,
// code, event); every other member is skipped, checked to be valid JSON.
// Anything else (a duplicate, a member that matches a field's name other
// than by its exact spelling, an escape in a read value, bad JSON) is left
// to encoding/json: where jsonscan reports an error, the message is simply
// not taken.
func readRealtimeEvent(data []byte, ev *realtimeEvent) bool {
	*ev = realtimeEvent{}
	var o jsonscan.Object
	// The event's own object takes one level of the room.
	if o.Open(data, jsonscan.SkipSpace(data, 0), maxSkipDepth+1) != nil {
		return false
	}
	seen := 0
	for {
		more, err := o.Next(data)
		if err != nil {
			return false
		}
		if !more {
			return jsonscan.Finish(data, o.I) == nil
		}
		f, exact := realtimeField(&o)
		ok := false
		switch {
		case !exact || f&seen != 0:
			return false
		case f == 0:
			o.I, err = jsonscan.SkipValue(data, o.I, o.Room)
			ok = err == nil
		default:
			seen |= f
			o.I, ok = realtimeMember(data, o.I, o.Room, f, ev)
		}
		if !ok {
			return false
		}
	}
}

// realtimeMember reads the value at b[i] of member f into ev and returns
// the offset after it; room is the value's (jsonscan.Object.Room).
func realtimeMember(b []byte, i, room, f int, ev *realtimeEvent) (int, bool) {
	if jsonscan.IsNull(b, i) {
		return i + 4, true // json.Unmarshal leaves the field as it is or sets it to nil: the zero value here
	}
	var (
		v   []byte
		end int
		ok  bool
	)
	switch f {
	case fieldType:
		v, end, ok = plainString(b, i)
		ev.typ = internType(v)
	case fieldResponseID:
		ev.responseID, end, ok = plainString(b, i)
	case fieldDelta:
		ev.delta, end, ok = plainString(b, i)
	case fieldAudio:
		ev.audio, end, ok = plainString(b, i)
	case fieldRate:
		var rate int
		rate, end, ok = intValue(b, i)
		ev.rate = max(rate, 0)
	case fieldMetadata:
		end, ok = readMetadata(b, i, room, ev)
	}
	return end, ok
}

// readMetadata reads the metadata object at b[i]: audio_duration_ms, the rest
// skipped.
func readMetadata(b []byte, i, room int, ev *realtimeEvent) (int, bool) {
	var o jsonscan.Object
	if o.Open(b, i, room) != nil {
		return 0, false
	}
	seen := false
	for {
		more, err := o.Next(b)
		switch {
		case err != nil:
			return 0, false
		case !more:
			return o.I, true
		}
		f, exact := metadataField(&o)
		switch {
		case !exact || f != 0 && seen:
			return 0, false
		case f == 0:
			if o.I, err = jsonscan.SkipValue(b, o.I, o.Room); err != nil {
				return 0, false
			}
			continue
		}
		seen = true
		if jsonscan.IsNull(b, o.I) {
			o.I += 4
			continue
		}
		var ok bool
		ev.durMS, o.I, ok = floatValue(b, o.I)
		ev.hasDur = ok
		if !ok {
			return 0, false
		}
	}
}

// realtimeField is the member the current name of o stands for (0: none
// the client reads); exact is false when encoding/json could match it to a
// field other than by its exact spelling (case folding, escapes), or to
// one of the error paths' fields.
func realtimeField(o *jsonscan.Object) (f int, exact bool) {
	switch string(o.Key) {
	case "type":
		return fieldType, true
	case "response_id":
		return fieldResponseID, true
	case "delta":
		return fieldDelta, true
	case "audio":
		return fieldAudio, true
	case "sample_rate_hz":
		return fieldRate, true
	case "metadata":
		return fieldMetadata, true
	}
	return 0, !matchesAny(o, "type", "response_id", "response", "delta", "audio", "sample_rate_hz", "metadata", "error", "code", "event")
}

// metadataField is realtimeField for the members of metadata.
func metadataField(o *jsonscan.Object) (f int, exact bool) {
	if string(o.Key) == "audio_duration_ms" {
		return fieldDuration, true
	}
	return 0, !matchesAny(o, "audio_duration_ms")
}

// matchesAny reports whether encoding/json would match the current name of
// o to one of the (lower-case ASCII) field names.
func matchesAny(o *jsonscan.Object, fields ...string) bool {
	for _, f := range fields {
		if o.KeyIs(f) {
			return true
		}
	}
	return false
}

// internType is the event type v names, without allocating for the types
// a turn's events have.
func internType(v []byte) string {
	switch string(v) {
	case evAudioDelta:
		return evAudioDelta
	case evAudioDone:
		return evAudioDone
	case evTranscriptDelta:
		return evTranscriptDelta
	case evTranscriptDone:
		return evTranscriptDone
	case evLegacyAudioDelta:
		return evLegacyAudioDelta
	case evLegacyAudioDone:
		return evLegacyAudioDone
	case evLegacyTranscriptDelta:
		return evLegacyTranscriptDelta
	case evLegacyTranscriptDone:
		return evLegacyTranscriptDone
	case evTextDelta:
		return evTextDelta
	case evLegacyTextDelta:
		return evLegacyTextDelta
	case evTranscriptionDelta:
		return evTranscriptionDelta
	}
	return string(v)
}

// plainString reads the string at b[i] when it stands for itself, when
// its JSON decoding is its bytes (no escape, valid UTF-8), and returns
// them and the offset after the string. A string that is base64 all
// through, as jsonscan's scan measured, needs no UTF-8 check.
func plainString(b []byte, i int) (v []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end, esc, plain, err := jsonscan.ScanString(b, i)
	if err != nil || esc {
		return nil, 0, false
	}
	n := end - 1
	v = b[i+1 : n : n]
	if plain != len(v) && !utf8.Valid(v) {
		return nil, 0, false
	}
	return v, end, true
}

// intValue reads the number at b[i] as json.Unmarshal stores it in an int:
// an integer without fraction or exponent, in int's range.
func intValue(b []byte, i int) (v, end int, ok bool) {
	end, isInt, err := jsonscan.ScanNumber(b, i)
	if err != nil || !isInt {
		return 0, 0, false
	}
	v64, ok := jsonscan.ParseInt(b[i:end])
	return int(v64), end, ok && int64(int(v64)) == v64 // false where int is narrower
}

// floatValue reads the number at b[i] as json.Unmarshal stores it in a float64.
func floatValue(b []byte, i int) (v float64, end int, ok bool) {
	end, _, err := jsonscan.ScanNumber(b, i)
	if err != nil {
		return 0, 0, false
	}
	v, err = strconv.ParseFloat(string(b[i:end]), 64)
	return v, end, err == nil
}
