package client

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

// This file holds a small JSON scanner that slices values out of an event
// without allocating. encoding/json allocates for every string it decodes,
// and an audio event is one 5 KB base64 string; the streaming hot path cannot
// afford that. The scanner validates the structure it walks (brackets,
// commas, colons, literals, number grammar, escape sequences, raw control
// characters inside strings) so that bad JSON is reported exactly where
// encoding/json reports it. Like encoding/json it accepts invalid UTF-8 inside
// strings and decodes it as U+FFFD. The end of a string and any control
// character in it are found eight bytes at a time in a short string and with
// bytescan's vectorised scan in a long one, so a 5 KB base64 string costs a
// few hundred nanoseconds.
//
// Field semantics mirror encoding/json decoding into a struct, which the fuzz
// tests check differentially: keys match exactly or case-insensitively with
// encoding/json's folding, null leaves a field unchanged, a repeated key
// overwrites scalars and merges objects.

// shortString is how far scanString looks for the closing quote word by
// word before it switches to a vectorised scan, a multiple of eight bytes.
// It covers the keys and most short values of a chat chunk; 32 and 40 (for
// model names) measured no faster.
const shortString = 24

// maxDepth is encoding/json's nesting limit; deeper input is an error there
// and here.
const maxDepth = 10000

// jsonText is one JSON string value as it appears in the input, without the
// quotes. raw aliases the input; unescaping happens only on demand.
type jsonText struct {
	raw []byte
	esc bool // raw contains at least one backslash escape
	set bool // the key was present with a string value
	// plain is the length of the run of base64 alphabet characters at the
	// start of raw, measured by the scan that found the string's end, or
	// -1 when it was not (short strings, escapes, no AVX2); it spares the
	// audio path a second pass over a 5 KB payload. The zero jsonText
	// (absent) has no raw, so its 0 is right too.
	plain int
}

// empty reports whether the string decodes to "". An escape always produces
// at least one byte, so the raw length decides.
func (t jsonText) empty() bool { return len(t.raw) == 0 }

// appendUnquoted appends the decoded string to dst with encoding/json's
// rules: escapes resolved, invalid UTF-8 bytes and unpaired surrogates
// replaced by U+FFFD.
func (t jsonText) appendUnquoted(dst []byte) []byte {
	return unquote(dst, t.raw)
}

// equal reports whether the decoded string equals s (s must be ASCII).
func (t jsonText) equal(s string) bool {
	if !t.esc {
		return string(t.raw) == s
	}
	var buf [64]byte
	return string(unquote(buf[:0], t.raw)) == s
}

// String decodes the text into a Go string (allocates; not for the hot path).
func (t jsonText) String() string { return string(t.appendUnquoted(nil)) }

// runeCount counts the characters of the decoded string.
func (t jsonText) runeCount(scratch []byte) (int, []byte) {
	if !t.esc {
		// Invalid bytes count one each, as the U+FFFD they decode to would.
		return utf8.RuneCount(t.raw), scratch
	}
	scratch = unquote(scratch[:0], t.raw)
	return utf8.RuneCount(scratch), scratch
}

// unquote mirrors encoding/json's unquoteBytes for the inside of a string
// whose escapes were already validated by scanString.
func unquote(dst, s []byte) []byte {
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

// syntaxError describes bad JSON at a byte offset of the event payload.
func syntaxError(off int, format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", off, fmt.Sprintf(format, args...))
}

// skipWS returns the offset of the first non-whitespace byte at or after i.
// Every JSON whitespace byte is at most ' ', so the usual case (compact JSON,
// the next byte is a token) costs one comparison.
func skipWS(b []byte, i int) int {
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

// scanString reads the string whose opening quote is at b[i] into t and
// returns the offset after its closing quote; on error t is unchanged.
// Keys and most values are short and plain: stringStop finds their end,
// and the rest is for long strings, escapes and errors. t is written field
// by field, never as a whole struct: a block copy that straddles one-byte
// stores just made stalls the processor's store forwarding, which costs as
// much as scanning a short string.
func scanString(b []byte, i int, t *jsonText) (int, error) {
	j, _ := stringStop(b, i)
	if j < 0 || b[j] != '"' {
		return scanStringSlow(b, i, j, t)
	}
	t.raw, t.esc, t.set, t.plain = b[i+1:j], false, true, -1
	return j + 1, nil
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

// scanStringSlow is scanString for strings that are long or hold an escape
// or a control character; stop is what stringStop found.
func scanStringSlow(b []byte, i, stop int, t *jsonText) (int, error) {
	switch {
	case stop >= 0 && b[stop] < 0x20:
		return 0, controlError(stop, b[stop])
	case stop < 0:
		// Most long strings (base64 audio) hold neither escapes nor
		// control characters: one pass finds their end.
		if k, plain := bytescan.StringEnd(b[i+1:]); k >= 0 && b[i+1+k] == '"' {
			t.raw, t.esc, t.set, t.plain = b[i+1:i+1+k], false, true, plain
			return i + 2 + k, nil
		}
	}
	// Anything else takes the loop below, which words the errors.
	j := i + 1
	esc := false
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, syntaxError(i, "unterminated string")
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			raw := b[i+1 : q]
			if k := bytescan.IndexControl(raw); k >= 0 {
				return 0, controlError(i+1+k, raw[k])
			}
			if esc || bytes.IndexByte(raw, '\\') >= 0 {
				if err := checkEscapes(raw, i+1); err != nil {
					return 0, err
				}
				esc = true
			}
			t.raw, t.esc, t.set, t.plain = raw, esc, true, -1
			return q + 1, nil
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
// the offset of raw in the payload, for the error message.
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

// isNull reports whether the literal null starts at b[i].
func isNull(b []byte, i int) bool {
	return len(b)-i >= 4 && string(b[i:i+4]) == "null"
}

// literal checks that the literal lit starts at b[i] and returns the offset
// after it.
func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, syntaxError(i, "invalid literal (expected %s)", lit)
	}
	return i + len(lit), nil
}

// scanNumber checks the JSON number grammar at b[i] and returns the offset
// after the number and whether it is a plain integer (no fraction, no
// exponent).
func scanNumber(b []byte, i int) (end int, integer bool, err error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false, syntaxError(start, "invalid number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
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
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false, syntaxError(start, "invalid number (no exponent digits)")
		}
	}
	return i, integer, nil
}

// parseInt converts an integer literal already checked by scanNumber; ok is
// false when it does not fit in an int64.
func parseInt(s []byte) (v int64, ok bool) {
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

// skipValue validates and skips the value at b[i]; depth is the nesting depth
// of the enclosing container (0 at top level). Most skipped values are
// short scalars (ids, numbers, null), so containers are walked by separate
// functions: skipValue's own frame stays small.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, syntaxError(i, "unexpected end of input, expected a value")
	}
	switch c := b[i]; {
	case c == '"':
		j, _ := stringStop(b, i)
		if j >= 0 && b[j] == '"' {
			return j + 1, nil
		}
		var t jsonText
		return scanStringSlow(b, i, j, &t)
	case c == 'n':
		if isNull(b, i) {
			return i + 4, nil
		}
		return literal(b, i, "null") // words the error
	case c == '-' || (c >= '0' && c <= '9'):
		j, _, err := scanNumber(b, i)
		return j, err
	case c == '{':
		return skipObject(b, i, depth)
	case c == '[':
		return skipArray(b, i, depth)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	default:
		return 0, syntaxError(i, "unexpected character %q, expected a value", c)
	}
}

// skipObject is skipValue for the object at b[i].
func skipObject(b []byte, i, depth int) (int, error) {
	var o object
	if err := o.open(b, i, depth+1); err != nil {
		return 0, err
	}
	for {
		ok, err := o.next(b)
		if err != nil || !ok {
			return o.i, err
		}
		if o.i, err = skipValue(b, o.i, o.depth); err != nil {
			return 0, err
		}
	}
}

// skipArray is skipValue for the array at b[i].
func skipArray(b []byte, i, depth int) (int, error) {
	var a array
	if err := a.open(b, i, depth+1); err != nil {
		return 0, err
	}
	for {
		ok, err := a.next(b)
		if err != nil || !ok {
			return a.i, err
		}
		if a.i, err = skipValue(b, a.i, a.depth); err != nil {
			return 0, err
		}
	}
}

// object walks the members of one JSON object. After next returns true,
// key is the member's key and i the offset of its value; the caller must
// set i to the offset after that value before calling next again. The
// decoders switch on the key in their own loop, so the walk makes no
// indirect calls. An object is opened in place (open, openOrNull) and
// never copied: copying a struct in blocks right after its one-byte fields
// were stored stalls the processor's store forwarding, which cost more
// than the rest of a member's walk.
type object struct {
	i     int
	depth int
	n     int    // members returned so far
	key   []byte // the current member's key as written, without the quotes
	// fold is set when key has escapes or non-ASCII bytes, and may still
	// match a field name after unescaping and Unicode case folding.
	fold bool
	null bool // the value was null: there are no members
}

// open starts walking the object whose '{' is at b[i]; depth is the
// object's own nesting depth.
func (o *object) open(b []byte, i, depth int) error {
	if i >= len(b) || b[i] != '{' || depth > maxDepth {
		return openError(b, i, '{')
	}
	o.i, o.depth = i+1, depth
	return nil
}

// openError is the error of object.open or array.open for a container
// that does not start with bracket at b[i] or nests too deep. It is kept
// out of them so that they inline.
func openError(b []byte, i int, bracket byte) error {
	switch {
	case i < len(b) && b[i] == bracket:
		return syntaxError(i, "nesting deeper than %d", maxDepth)
	case bracket == '{':
		return syntaxError(i, "expected an object")
	default:
		return syntaxError(i, "expected an array")
	}
}

// openOrNull is open for an object that may also be null (which has no
// members, as encoding/json leaves a struct alone for null); depth is the
// nesting depth of the enclosing container. where names the object in
// errors ("" for the top level).
func (o *object) openOrNull(b []byte, i, depth int, where string) error {
	if isNull(b, i) {
		o.i, o.null = i+4, true
		return nil
	}
	if err := o.open(b, i, depth+1); err != nil {
		if where != "" {
			return fmt.Errorf("%s: %w", where, err)
		}
		return err
	}
	return nil
}

// next advances to the next member of the object in b. It returns false after the closing
// brace, and i is then the offset after it.
func (o *object) next(b []byte) (bool, error) {
	if o.null {
		return false, nil
	}
	i := skipWS(b, o.i)
	if i >= len(b) {
		return false, syntaxError(i, "unexpected end of input in object")
	}
	if b[i] == '}' {
		o.i = i + 1
		return false, nil
	}
	if o.n > 0 {
		if b[i] != ',' {
			return false, syntaxError(i, "expected ',' or '}' after object member")
		}
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return false, syntaxError(i, "expected a string key")
	}
	// scanString's fast path, written out: keys are short and plain.
	j, high := stringStop(b, i)
	if j >= 0 && b[j] == '"' {
		o.key, o.fold = b[i+1:j], high
		j++
	} else {
		var key jsonText
		end, err := scanStringSlow(b, i, j, &key)
		if err != nil {
			return false, err
		}
		o.key, o.fold = key.raw, key.esc || !isASCII(key.raw)
		j = end
	}
	i = skipWS(b, j)
	if i >= len(b) || b[i] != ':' {
		return false, syntaxError(i, "expected ':' after object key")
	}
	o.i = skipWS(b, i+1)
	o.n++
	return true, nil
}

// keyIs reports whether the current key selects the field name (lower-case
// ASCII), matching exactly or case-insensitively as encoding/json does. It
// inlines into the decoders' switches: most keys differ from the name in
// length, and a plain key (not fold) of another length cannot match. A
// fold key never equals the name byte for byte (the name has neither
// escapes nor non-ASCII bytes) but may match after unescaping and folding.
func (o *object) keyIs(name string) bool {
	if len(o.key) != len(name) && !o.fold {
		return false
	}
	return string(o.key) == name || o.keyIsSlow(name)
}

// keyIsSlow is keyIs for a key that is fold or differs from the name only
// in case.
func (o *object) keyIsSlow(name string) bool {
	if o.fold {
		return foldedKeyIs(o.key, name)
	}
	return asciiEqualFold(o.key, name)
}

// array walks the elements of one JSON array, like object.
type array struct {
	i     int
	depth int
	n     int // elements returned so far
}

// open starts walking the array whose '[' is at b[i]; depth is the array's
// own nesting depth.
func (a *array) open(b []byte, i, depth int) error {
	if i >= len(b) || b[i] != '[' || depth > maxDepth {
		return openError(b, i, '[')
	}
	a.i, a.depth = i+1, depth
	return nil
}

// next advances to the next element; ok is false after the closing bracket.
func (a *array) next(b []byte) (ok bool, err error) {
	i := skipWS(b, a.i)
	if i >= len(b) {
		return false, syntaxError(i, "unexpected end of input in array")
	}
	if b[i] == ']' {
		a.i = i + 1
		return false, nil
	}
	if a.n > 0 {
		if b[i] != ',' {
			return false, syntaxError(i, "expected ',' or ']' after array element")
		}
		i = skipWS(b, i+1)
	}
	a.i = i
	a.n++
	return true, nil
}

// readString stores the string value at b[i] into dst, leaves dst unchanged
// for null, and returns the offset after the value.
func readString(b []byte, i int, dst *jsonText, field string) (int, error) {
	if i < len(b) && b[i] == '"' {
		return scanString(b, i, dst)
	}
	if isNull(b, i) {
		return i + 4, nil
	}
	return 0, syntaxError(i, "%s: expected a string or null", field)
}

// readInt stores the integer value at b[i] into dst (and sets *seen), leaves
// them unchanged for null, and returns the offset after the value. Numbers
// that are not integers or overflow int64 are skipped: encoding/json refuses
// them and a token count is not worth failing a request for.
func readInt(b []byte, i int, dst *int64, seen *bool, field string) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	if i >= len(b) || !(b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
		return 0, syntaxError(i, "%s: expected a number or null", field)
	}
	j, integer, err := scanNumber(b, i)
	if err != nil {
		return 0, err
	}
	if integer {
		if v, ok := parseInt(b[i:j]); ok {
			*dst = v
			*seen = true
		}
	}
	return j, nil
}

// finish checks that only whitespace follows the top-level value ending at i.
func finish(b []byte, i int) error {
	if i = skipWS(b, i); i != len(b) {
		return syntaxError(i, "unexpected data after the top-level value")
	}
	return nil
}

func asciiEqualFold(s []byte, name string) bool {
	for j, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[j] {
			return false
		}
	}
	return true
}

func isASCII(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldedKeyIs is the slow path of keyIs for keys with escapes or non-ASCII
// bytes: encoding/json folds both sides (so U+017F matches 's' and U+212A
// matches 'k') and compares.
func foldedKeyIs(key []byte, name string) bool {
	var ub, fb [64]byte
	folded := appendFoldedName(fb[:0], unquote(ub[:0], key))
	if len(folded) != len(name) {
		return false
	}
	for j := range len(name) {
		c := name[j]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if folded[j] != c {
			return false
		}
	}
	return true
}

// appendFoldedName is encoding/json's key folding: ASCII upper case, other
// runes mapped to the smallest rune of their fold set.
func appendFoldedName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
