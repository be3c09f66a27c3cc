package client

import "bytes"

// A stream's audio events differ from each other in one place: the long
// base64 string of the audio (delta.content, or delta.audio.data). The
// bytes before it (id, model, choices, delta, role) and after it (the
// closing brackets, modality, metrics) repeat event after event. When an
// event's bytes before its long string, and after it, are those of the
// previous audio event, and its long string is plain (no escape, no
// control character), its tokens are the previous event's with one string
// changed: it decodes to what the previous event decoded to, with that
// string in the audio field. chunkTemplate checks exactly that (two byte
// comparisons and the one string scan the walk would make) instead of
// walking the JSON again. Anything else takes the full walk.
// FuzzChunkTemplate checks the two ways against each other.

// minTemplateString is the shortest audio string a template is made for:
// shorter events are cheap to walk.
const minTemplateString = 256

// maxTemplateBytes bounds the bytes around the string a template copies.
const maxTemplateBytes = 1024

// textRef is a jsonText of the template's event: its offset from the
// start of the event (in the prefix) or from its end (in the suffix,
// negative), so that it can be placed in a new event of another length.
type textRef struct {
	has     bool // the field has a value (raw is not nil)
	off     int
	n       int
	fromEnd bool
	t       jsonText // esc, set and plain; raw is rebuilt
}

type chunkTemplate struct {
	prefix []byte // the event up to and including the audio string's opening quote
	suffix []byte // the event from the audio string's closing quote
	audio  bool   // the string is delta.audio.data, not delta.content
	chunk  chatChunk
	refs   [4]textRef // Modality, FinishReason, ErrorMessage, the other audio field
	ok     bool
}

// decode fills c from data, by the template when it fits and by the full
// walk otherwise; a walked event with a long plain audio string becomes
// the template.
func (tp *chunkTemplate) decode(data []byte, c *chatChunk) error {
	if tp.apply(data, c) {
		return nil
	}
	if err := decodeChatChunk(data, c); err != nil {
		return err
	}
	tp.build(data, c)
	return nil
}

// apply decodes data by the template, reporting whether it fitted.
func (tp *chunkTemplate) apply(data []byte, c *chatChunk) bool {
	// Both byte runs are compared before the string is scanned, so that an
	// event whose layout differs (a server that numbers its chunks, or
	// times each one in its metrics) costs two comparisons, not a scan of
	// its audio on top of the walk.
	if !tp.ok || len(data) < len(tp.prefix)+len(tp.suffix) ||
		!bytes.HasPrefix(data, tp.prefix) || !bytes.HasSuffix(data, tp.suffix) {
		return false
	}
	var s jsonText
	// The scan the walk makes: from the opening quote to the first quote,
	// backslash or control character, which must be the suffix's quote.
	end, err := scanString(data, len(tp.prefix)-1, &s)
	if err != nil || s.esc || end-1 != len(data)-len(tp.suffix) {
		return false
	}
	*c = tp.chunk
	fields := tp.fields(c)
	for k, r := range tp.refs {
		if !r.has {
			continue
		}
		off := r.off
		if r.fromEnd {
			off += len(data)
		}
		*fields[k] = r.t
		fields[k].raw = data[off : off+r.n]
	}
	if tp.audio {
		c.AudioData = s
	} else {
		c.Content = s
	}
	return true
}

// fields are the jsonText fields of c a template places, in refs' order:
// every one but the audio string.
func (tp *chunkTemplate) fields(c *chatChunk) [4]*jsonText {
	other := &c.AudioData
	if tp.audio {
		other = &c.Content
	}
	return [4]*jsonText{&c.Modality, &c.FinishReason, &c.ErrorMessage, other}
}

// build makes data (which decoded to c) the template, when its audio
// string is long and plain and every other string lies before or after
// it; otherwise the template is dropped.
func (tp *chunkTemplate) build(data []byte, c *chatChunk) {
	tp.ok = false
	s, audio := c.Content, false
	if len(c.AudioData.raw) > len(s.raw) {
		s, audio = c.AudioData, true
	}
	if len(s.raw) < minTemplateString || s.esc {
		return
	}
	start := offsetIn(data, s.raw)
	end := start + len(s.raw) // the closing quote
	if start < 1 || end >= len(data) || start+len(data)-end > maxTemplateBytes {
		return
	}
	tp.audio = audio
	tp.chunk = *c
	fields := tp.fields(&tp.chunk)
	for k, f := range fields {
		tp.refs[k] = textRef{t: *f}
		tp.refs[k].t.raw = nil
		if f.raw == nil {
			continue
		}
		off := offsetIn(data, f.raw)
		switch {
		case off+len(f.raw) < start:
			tp.refs[k].off = off
		case off > end:
			tp.refs[k].off, tp.refs[k].fromEnd = off-len(data), true
		default:
			return // inside the audio string's span: not placeable
		}
		tp.refs[k].n, tp.refs[k].has = len(f.raw), true
	}
	// The template keeps no slice of data, which the next read reuses.
	for _, f := range fields {
		f.raw = nil
	}
	tp.chunk.Content, tp.chunk.AudioData = jsonText{}, jsonText{}
	tp.prefix = append(tp.prefix[:0], data[:start]...)
	tp.suffix = append(tp.suffix[:0], data[end:]...)
	tp.ok = true
}

// offsetIn is the offset of sub in b, which sub is a slice of (b[i:j]).
func offsetIn(b, sub []byte) int { return cap(b) - cap(sub) }
