package client

import (
	"fmt"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/jsonscan"
)

// The chat and speech event decoders (chunk.go, speechevent.go) read an
// event with package jsonscan's walk, which slices values out of it
// without allocating and refuses bad JSON exactly where encoding/json
// does. This file holds what they add to it: the string value type,
// encoding/json's field semantics and the wording of their errors.
//
// Field semantics mirror encoding/json decoding into a struct, which the
// fuzz tests check differentially: keys match exactly or case-insensitively
// with encoding/json's folding (jsonscan.Object.KeyIs), null leaves a field
// unchanged, a repeated key overwrites scalars and merges objects. Errors
// name the byte offset and, for a value of the wrong type, the field's path.

// maxDepth is the nesting the decoders allow, encoding/json's.
const maxDepth = jsonscan.MaxDepth

// jsonText is one JSON string value as it appears in the input, without the
// quotes. raw aliases the input; unescaping happens only on demand.
type jsonText struct {
	raw []byte
	esc bool // raw contains at least one backslash escape
	set bool // the key was present with a string value
	// plain is the length of the run of base64 alphabet characters at the
	// start of raw, measured by the scan that found the string's end, or
	// -1 when it was not (jsonscan.ScanString); it spares the audio path a
	// second pass over a 5 KB payload. The zero jsonText (absent) has no
	// raw, so its 0 is right too.
	plain int
}

// empty reports whether the string decodes to "". An escape always produces
// at least one byte, so the raw length decides.
func (t jsonText) empty() bool { return len(t.raw) == 0 }

// appendUnquoted appends the decoded string to dst with encoding/json's
// rules: escapes resolved, invalid UTF-8 bytes and unpaired surrogates
// replaced by U+FFFD.
func (t jsonText) appendUnquoted(dst []byte) []byte {
	return jsonscan.Unquote(dst, t.raw)
}

// equal reports whether the decoded string equals s (s must be ASCII).
func (t jsonText) equal(s string) bool {
	if !t.esc {
		return string(t.raw) == s
	}
	var buf [64]byte
	return string(jsonscan.Unquote(buf[:0], t.raw)) == s
}

// String decodes the text into a Go string (allocates; not for the hot path).
func (t jsonText) String() string { return string(t.appendUnquoted(nil)) }

// runeCount counts the characters of the decoded string.
func (t jsonText) runeCount(scratch []byte) (int, []byte) {
	if !t.esc {
		// Invalid bytes count one each, as the U+FFFD they decode to would.
		return utf8.RuneCount(t.raw), scratch
	}
	scratch = jsonscan.Unquote(scratch[:0], t.raw)
	return utf8.RuneCount(scratch), scratch
}

// scanString reads the string whose opening quote is at b[i] into t and
// returns the offset after its closing quote; on error t is unchanged. t
// is written field by field, never as a whole struct: a block copy that
// straddles one-byte stores just made stalls the processor's store
// forwarding, which costs as much as scanning a short string.
func scanString(b []byte, i int, t *jsonText) (int, error) {
	end, esc, plain, err := jsonscan.ScanString(b, i)
	if err != nil {
		return 0, err
	}
	t.raw, t.esc, t.set, t.plain = b[i+1:end-1], esc, true, plain
	return end, nil
}

// openOrNull opens o on the object or null at b[i] (jsonscan.OpenOrNull);
// where names the object in errors ("" for the top level).
func openOrNull(o *jsonscan.Object, b []byte, i, room int, where string) error {
	if err := o.OpenOrNull(b, i, room); err != nil {
		if where != "" {
			return fmt.Errorf("%s: %w", where, err)
		}
		return err
	}
	return nil
}

// readString stores the string value at b[i] into dst, leaves dst unchanged
// for null, and returns the offset after the value.
func readString(b []byte, i int, dst *jsonText, field string) (int, error) {
	if i < len(b) && b[i] == '"' {
		return scanString(b, i, dst)
	}
	if jsonscan.IsNull(b, i) {
		return i + 4, nil
	}
	return 0, &jsonscan.SyntaxError{Offset: i, Msg: field + ": expected a string or null"}
}

// readInt stores the integer value at b[i] into dst (and sets *seen), leaves
// them unchanged for null, and returns the offset after the value. Numbers
// that are not integers or overflow int64 are skipped: encoding/json refuses
// them and a token count is not worth failing a request for.
func readInt(b []byte, i int, dst *int64, seen *bool, field string) (int, error) {
	if jsonscan.IsNull(b, i) {
		return i + 4, nil
	}
	if i >= len(b) || !(b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
		return 0, &jsonscan.SyntaxError{Offset: i, Msg: field + ": expected a number or null"}
	}
	j, integer, err := jsonscan.ScanNumber(b, i)
	if err != nil {
		return 0, err
	}
	if integer {
		if v, ok := jsonscan.ParseInt(b[i:j]); ok {
			*dst = v
			*seen = true
		}
	}
	return j, nil
}
