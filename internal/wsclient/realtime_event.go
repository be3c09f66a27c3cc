package wsclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/bytescan"
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

// readRealtimeEvent is the hand-written reader of the events a turn is made
// of (audio and transcript deltas above all): one pass over the message,
// the payload found with bytescan and left in place, no allocation for the
// event types the client knows. It takes a message (true) only when it can
// tell exactly what json.Unmarshal into realtimeMsg would give: a JSON
// object whose members it reads are spelled exactly, each once, with
// values of their type, strings that stand for themselves (no escape,
// valid UTF-8), and no member of the error paths (response, error, code,
// event); every other member is skipped, checked to be valid JSON. Anything
// else (a duplicate, a member that differs from a field's name only in
// case, an escape in a name or a read value) is left to encoding/json.
func readRealtimeEvent(data []byte, ev *realtimeEvent) bool {
	*ev = realtimeEvent{}
	s := jsonScan{b: data}
	seen := 0
	ok := s.object(func(name []byte) bool {
		f, exact := realtimeField(name)
		switch {
		case !exact || f&seen != 0:
			return false
		case f == 0:
			return s.skipValue(0)
		}
		seen |= f
		return s.realtimeMember(f, ev)
	})
	return ok && s.end()
}

// realtimeMember reads the value of member f into ev.
func (s *jsonScan) realtimeMember(f int, ev *realtimeEvent) bool {
	if s.null() {
		return true // json.Unmarshal leaves the field as it is or sets it to nil: the zero value here
	}
	switch f {
	case fieldType:
		v, ok := s.plainString()
		ev.typ = internType(v)
		return ok
	case fieldResponseID:
		v, ok := s.plainString()
		ev.responseID = v
		return ok
	case fieldDelta:
		v, ok := s.plainString()
		ev.delta = v
		return ok
	case fieldAudio:
		v, ok := s.plainString()
		ev.audio = v
		return ok
	case fieldRate:
		v, ok := s.integer()
		ev.rate = max(v, 0)
		return ok
	case fieldMetadata:
		return s.metadata(ev)
	}
	return false
}

// metadata reads the metadata object: audio_duration_ms, the rest skipped.
func (s *jsonScan) metadata(ev *realtimeEvent) bool {
	seen := false
	return s.object(func(name []byte) bool {
		f, exact := metadataField(name)
		switch {
		case !exact || f != 0 && seen:
			return false
		case f == 0:
			return s.skipValue(1)
		}
		seen = true
		if s.null() {
			return true
		}
		v, ok := s.float()
		ev.durMS, ev.hasDur = v, ok
		return ok
	})
}

// realtimeField is the member a top-level name stands for (0: none the
// client reads); exact is false when encoding/json could match it to a
// field other than by its exact spelling (case folding), or to one of the
// error paths' fields.
func realtimeField(name []byte) (f int, exact bool) {
	switch string(name) {
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
	return 0, !foldsToAny(name, "type", "response_id", "response", "delta", "audio", "sample_rate_hz", "metadata", "error", "code", "event")
}

// metadataField is realtimeField for the members of metadata.
func metadataField(name []byte) (f int, exact bool) {
	if string(name) == "audio_duration_ms" {
		return fieldDuration, true
	}
	return 0, !foldsToAny(name, "audio_duration_ms")
}

// foldsToAny reports whether name could match one of the (lower-case
// ASCII) field names under encoding/json's case-insensitive matching: it
// equals one ignoring ASCII case, or it is not ASCII (some non-ASCII
// letters fold to ASCII ones), in which case the answer is yes to be safe.
func foldsToAny(name []byte, fields ...string) bool {
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, f := range fields {
		if len(f) != len(name) {
			continue
		}
		same := true
		for i := range name {
			c := name[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != f[i] {
				same = false
				break
			}
		}
		if same {
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

// jsonScan reads JSON from b at i. Every method skips the white space
// before its token and reports false for input that is not what it reads;
// the scan is then abandoned, so i is of no further use.
type jsonScan struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of a skipped value; a deeper one is left
// to encoding/json.
const maxSkipDepth = 64

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, or 0 at the end.
func (s *jsonScan) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// token consumes c if it comes next.
func (s *jsonScan) token(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// end reports whether only white space is left.
func (s *jsonScan) end() bool {
	s.space()
	return s.i == len(s.b)
}

// object reads an object, calling member with each name (plain, without
// its quotes) when the scan stands before the member's value; member reads
// the value and reports whether to go on.
func (s *jsonScan) object(member func(name []byte) bool) bool {
	if !s.token('{') {
		return false
	}
	if s.token('}') {
		return true
	}
	for {
		name, ok := s.plainString()
		if !ok || !s.token(':') || !member(name) {
			return false
		}
		if s.token('}') {
			return true
		}
		if !s.token(',') {
			return false
		}
	}
}

// null consumes a null literal if it comes next.
func (s *jsonScan) null() bool {
	s.space()
	return s.literal("null")
}

func (s *jsonScan) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// plainString reads a string that stands for itself, one whose JSON
// decoding is its bytes (no escape, no control character, valid UTF-8),
// and returns them. Base64 is checked by bytescan's scan alone.
func (s *jsonScan) plainString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	rest := s.b[s.i+1:]
	end, plain := bytescan.StringEnd(rest)
	if end < 0 || rest[end] != '"' {
		return nil, false
	}
	v := rest[:end:end]
	if plain != end && !utf8.Valid(v) {
		return nil, false
	}
	s.i += 1 + end + 1
	return v, true
}

// skipString skips any valid string.
func (s *jsonScan) skipString() bool {
	if s.peek() != '"' {
		return false
	}
	i := s.i + 1
	for {
		end, _ := bytescan.StringEnd(s.b[i:])
		if end < 0 {
			return false
		}
		i += end
		switch s.b[i] {
		case '"':
			s.i = i + 1
			return true
		case '\\':
			n := escapeLen(s.b[i:])
			if n == 0 {
				return false
			}
			i += n
		default:
			return false // a control character
		}
	}
}

// escapeLen is the length of the valid escape b starts with, or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// skipValue skips any valid value nested at most maxSkipDepth deep.
func (s *jsonScan) skipValue(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		return s.skipString()
	case c == '{':
		return depth < maxSkipDepth && s.object(func([]byte) bool { return s.skipValue(depth + 1) })
	case c == '[':
		return depth < maxSkipDepth && s.array(depth)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.number()
		return ok
	}
	return false
}

func (s *jsonScan) array(depth int) bool {
	if !s.token('[') {
		return false
	}
	if s.token(']') {
		return true
	}
	for {
		if !s.skipValue(depth + 1) {
			return false
		}
		if s.token(']') {
			return true
		}
		if !s.token(',') {
			return false
		}
	}
}

// number reads a number as JSON's grammar has it and returns its text.
func (s *jsonScan) number() ([]byte, bool) {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// digits consumes a run of decimal digits and returns its length.
func (s *jsonScan) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// integer reads a number that json.Unmarshal stores in an int: an integer
// without fraction or exponent. One longer than 18 digits, or beyond int,
// is left to encoding/json (false).
func (s *jsonScan) integer() (int, bool) {
	lit, ok := s.number()
	if !ok {
		return 0, false
	}
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	if len(lit) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false // a fraction or an exponent
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return int(v), int64(int(v)) == v // false where int is narrower
}

// float reads a number as json.Unmarshal stores it in a float64.
func (s *jsonScan) float() (float64, bool) {
	lit, ok := s.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	return v, err == nil
}
