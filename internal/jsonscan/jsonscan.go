// Package jsonscan is the lexical layer of the client's hand-written JSON
// readers: the chat and speech event decoders of package client and the
// Realtime event reader of package wsclient. It finds where values start
// and end in a JSON document and slices strings out of it without
// allocating; the readers decide what the values mean.
//
// It is hand-written because a streaming response is read event by event:
// encoding/json allocates for every string it decodes, and an audio event
// is one 5 KB base64 string, so its per-event cost would bound how many
// streams one client can follow.
//
// What it guarantees: every value it walks is validated as encoding/json
// validates it (brackets, commas, colons, literals, the number grammar,
// escape sequences, raw control characters in strings, nesting at most
// MaxDepth deep), so that input is refused exactly where encoding/json
// refuses it, with a *SyntaxError naming the byte offset. Like
// encoding/json it accepts invalid UTF-8 inside strings (Unquote decodes it
// as U+FFFD). Object.KeyIs matches member names as encoding/json matches
// them to struct fields: exactly or case-insensitively with its folding.
// A walk allocates nothing unless it reports an error (or KeyIs folds a
// name longer than 64 bytes); Unquote appends to the caller's buffer. The
// tests and fuzz targets check all of it against encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/bytescan"
)

// MaxDepth is encoding/json's nesting limit; deeper input is an error there
// and here.
const MaxDepth = 10000

// shortString is how far ScanString looks for the closing quote word by
// word before it switches to a vectorised scan, a multiple of eight bytes.
// It covers the keys and most short values of an event; 32 and 40 (for
// model names) measured no faster.
const shortString = 24

// SyntaxError is bad JSON at a byte offset of the input.
type SyntaxError struct {
	Offset int    // the offset of the offending byte
	Msg    string // what is wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// syntaxError is a *SyntaxError at off with a formatted message.
func syntaxError(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// SkipSpace returns the offset of the first non-whitespace byte at or after
// i. Every JSON whitespace byte is at most ' ', so the usual case (compact
// JSON, the next byte is a token) costs one comparison.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ScanString validates the string whose opening quote is at b[i] and
// returns the offset after its closing quote (its inside is b[i+1:end-1]),
// whether the inside holds a backslash escape, and plain: the length of
// the run of base64 alphabet characters at the start of the inside,
// measured by the scan that found the string's end, or -1 when it was not
// (short strings, escapes, no AVX2); it spares an audio reader a second
// pass over a 5 KB payload. Keys and most values are short and plain:
// stringStop finds their end, and the rest is for long strings, escapes
// and errors.
func ScanString(b []byte, i int) (end int, esc bool, plain int, err error) {
	j, _ := stringStop(b, i)
	if j < 0 || b[j] != '"' {
		return scanStringSlow(b, i, j)
	}
	return j + 1, false, -1, nil
}

// stringStop looks at the first shortString bytes of the string whose
// opening quote is at b[i], eight at a time, for the first byte that is
// '"', '\\' or a control character. It returns its offset, or -1 when
// there is none, and whether a non-ASCII byte came before it.
func stringStop(b []byte, i int) (stop int, high bool) {
	var seen uint64 // OR of the bytes before the stop: a high bit is non-ASCII
	j, end := i+1, min(len(b), i+1+shortString)
	for ; j+8 <= end; j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		if m := stringStops(w); m != 0 {
			k := bits.TrailingZeros64(m) / 8
			seen |= w & (1<<(8*k) - 1)
			return j + k, seen&0x8080808080808080 != 0
		}
		seen |= w
	}
	for ; j < end; j++ { // the last bytes of the input
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
			return j, seen&0x8080808080808080 != 0
		}
		seen |= uint64(b[j])
	}
	return -1, seen&0x8080808080808080 != 0
}

// stringStops returns the high bits of the bytes of w (eight string bytes,
// the first in the low byte) that are '"', '\\' or below 0x20. Each of the
// three tests is the classic "has a zero byte" word trick, whose borrow can
// only mark bytes above a byte that really matches: the lowest marked byte
// is always right, and it is the only one the caller uses.
func stringStops(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ (ones * '"')
	s := w ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s | (w-ones*0x20)&^w) & highs
}

// scanStringSlow is ScanString for strings that are long or hold an escape
// or a control character; stop is what stringStop found.
func scanStringSlow(b []byte, i, stop int) (end int, esc bool, plain int, err error) {
	switch {
	case stop >= 0 && b[stop] < 0x20:
		return 0, false, -1, controlError(stop, b[stop])
	case stop < 0:
		// Most long strings (base64 audio) hold neither escapes nor
		// control characters: one pass finds their end.
		if k, plain := bytescan.StringEnd(b[i+1:]); k >= 0 && b[i+1+k] == '"' {
			return i + 2 + k, false, plain, nil
		}
	}
	// Anything else takes the loop below, which words the errors.
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false, -1, syntaxError(i, "unterminated string")
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			raw := b[i+1 : q]
			if k := bytescan.IndexControl(raw); k >= 0 {
				return 0, false, -1, controlError(i+1+k, raw[k])
			}
			if esc || bytes.IndexByte(raw, '\\') >= 0 {
				if err := checkEscapes(raw, i+1); err != nil {
					return 0, false, -1, err
				}
				esc = true
			}
			return q + 1, esc, -1, nil
		}
		esc = true
		j = q + 1
	}
}

// controlError is encoding/json's complaint about a raw control character
// (U+0000 to U+001F) inside a string, which JSON requires to be escaped.
func controlError(off int, c byte) error {
	return syntaxError(off, "invalid character %q in string literal", c)
}

// checkEscapes validates every backslash escape of a string's inside; off is
// the offset of raw in the input, for the error message.
func checkEscapes(raw []byte, off int) error {
	for r := 0; r < len(raw); r++ {
		if raw[r] != '\\' {
			continue
		}
		if r+1 >= len(raw) {
			return syntaxError(off+r, "backslash at end of string")
		}
		switch raw[r+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			r++
		case 'u':
			if getu4(raw[r:]) < 0 {
				return syntaxError(off+r, "invalid \\u escape")
			}
			r += 5
		default:
			return syntaxError(off+r, "invalid escape \\%c", raw[r+1])
		}
	}
	return nil
}

// Unquote appends the decoded inside s of a string that ScanString
// accepted to dst, with encoding/json's rules (its unquoteBytes): escapes
// resolved, invalid UTF-8 bytes and unpaired surrogates replaced by U+FFFD.
func Unquote(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return dst
			}
			switch s[r+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getu4(s[r:])
				if rr < 0 {
					return dst
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6
						dst = utf8.AppendRune(dst, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// IsNull reports whether the literal null starts at b[i].
func IsNull(b []byte, i int) bool {
	return len(b)-i >= 4 && string(b[i:i+4]) == "null"
}

// Literal checks that the literal lit (true, false or null) starts at b[i]
// and returns the offset after it.
func Literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, syntaxError(i, "invalid literal (expected %s)", lit)
	}
	return i + len(lit), nil
}

// ScanNumber checks the JSON number grammar at b[i] and returns the offset
// after the number and whether it is a plain integer (no fraction, no
// exponent).
func ScanNumber(b []byte, i int) (end int, integer bool, err error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false, syntaxError(start, "invalid number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		d := i + 1
		if i = digits(b, d); i == d {
			return 0, false, syntaxError(start, "invalid number (no digits after '.')")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, d); i == d {
			return 0, false, syntaxError(start, "invalid number (no exponent digits)")
		}
	}
	return i, integer, nil
}

// digits returns the offset after the run of decimal digits at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// ParseInt converts an integer literal already checked by ScanNumber; ok is
// false when it does not fit in an int64.
func ParseInt(s []byte) (v int64, ok bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	var u uint64
	for _, c := range s {
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself, which is right
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// SkipValue validates and skips the value at b[i] and returns the offset
// after it; room is how many containers deep the value may nest (see
// Object.Room). Most skipped values are short scalars (ids, numbers,
// null), so containers are walked by separate functions: SkipValue's own
// frame stays small.
func SkipValue(b []byte, i, room int) (int, error) {
	if i >= len(b) {
		return 0, syntaxError(i, "unexpected end of input, expected a value")
	}
	switch c := b[i]; {
	case c == '"':
		j, _ := stringStop(b, i)
		if j >= 0 && b[j] == '"' {
			return j + 1, nil
		}
		end, _, _, err := scanStringSlow(b, i, j)
		return end, err
	case c == 'n':
		if IsNull(b, i) {
			return i + 4, nil
		}
		return Literal(b, i, "null") // words the error
	case c == '-' || (c >= '0' && c <= '9'):
		j, _, err := ScanNumber(b, i)
		return j, err
	case c == '{':
		return skipObject(b, i, room)
	case c == '[':
		return skipArray(b, i, room)
	case c == 't':
		return Literal(b, i, "true")
	case c == 'f':
		return Literal(b, i, "false")
	default:
		return 0, syntaxError(i, "unexpected character %q, expected a value", c)
	}
}

// skipObject is SkipValue for the object at b[i].
func skipObject(b []byte, i, room int) (int, error) {
	var o Object
	if err := o.Open(b, i, room); err != nil {
		return 0, err
	}
	for {
		more, err := o.Next(b)
		if err != nil || !more {
			return o.I, err
		}
		if o.I, err = SkipValue(b, o.I, o.Room); err != nil {
			return 0, err
		}
	}
}

// skipArray is SkipValue for the array at b[i].
func skipArray(b []byte, i, room int) (int, error) {
	var a Array
	if err := a.Open(b, i, room); err != nil {
		return 0, err
	}
	for {
		more, err := a.Next(b)
		if err != nil || !more {
			return a.I, err
		}
		if a.I, err = SkipValue(b, a.I, a.Room); err != nil {
			return 0, err
		}
	}
}

// Finish checks that only whitespace follows the top-level value ending at
// i.
func Finish(b []byte, i int) error {
	if i = SkipSpace(b, i); i != len(b) {
		return syntaxError(i, "unexpected data after the top-level value")
	}
	return nil
}
