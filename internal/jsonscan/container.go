package jsonscan

import (
	"unicode"
	"unicode/utf8"
)

// Object walks the members of one JSON object. After Next returns true,
// Key is the member's key and I the offset of its value; the caller must
// set I to the offset after that value before calling Next again. Readers
// switch on the key in their own loop, so the walk makes no indirect
// calls. An Object is opened in place (Open, OpenOrNull) and never copied:
// copying a struct in blocks right after its one-byte fields were stored
// stalls the processor's store forwarding, which cost more than the rest
// of a member's walk.
//
// Nesting is bounded by a room rather than a depth: a container can be
// opened only with a room of at least 1, and the values inside it get one
// less (Room). A reader that follows encoding/json opens the top level
// with MaxDepth; one that wants to go less deep passes less.
type Object struct {
	I    int // the offset of the current member's value; after the walk, the offset after '}'
	Room int // the room of the object's values
	N    int // members returned so far
	// Key is the current member's key as written, without the quotes.
	Key []byte
	// Fold is set when Key has escapes or non-ASCII bytes, and may still
	// match a name after unescaping and Unicode case folding.
	Fold bool
	null bool // the value was null: there are no members
}

// Open starts walking the object whose '{' is at b[i] with the given room.
func (o *Object) Open(b []byte, i, room int) error {
	if i >= len(b) || b[i] != '{' || room <= 0 {
		return openError(b, i, '{')
	}
	o.I, o.Room = i+1, room-1
	return nil
}

// openError is the error of Object.Open or Array.Open for a container
// that does not start with bracket at b[i] or has no room left. It is kept
// out of them so that they inline.
func openError(b []byte, i int, bracket byte) error {
	switch {
	case i < len(b) && b[i] == bracket:
		return syntaxError(i, "nesting deeper than %d", MaxDepth)
	case bracket == '{':
		return syntaxError(i, "expected an object")
	default:
		return syntaxError(i, "expected an array")
	}
}

// OpenOrNull is Open for an object that may also be null, which has no
// members (encoding/json leaves a struct alone for null).
func (o *Object) OpenOrNull(b []byte, i, room int) error {
	if IsNull(b, i) {
		o.I, o.null = i+4, true
		return nil
	}
	return o.Open(b, i, room)
}

// Next advances to the next member of the object in b. It returns false
// after the closing brace, and I is then the offset after it.
func (o *Object) Next(b []byte) (bool, error) {
	if o.null {
		return false, nil
	}
	i := SkipSpace(b, o.I)
	if i >= len(b) {
		return false, syntaxError(i, "unexpected end of input in object")
	}
	if b[i] == '}' {
		o.I = i + 1
		return false, nil
	}
	if o.N > 0 {
		if b[i] != ',' {
			return false, syntaxError(i, "expected ',' or '}' after object member")
		}
		i = SkipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return false, syntaxError(i, "expected a string key")
	}
	// ScanString's fast path, written out: keys are short and plain.
	j, high := stringStop(b, i)
	if j >= 0 && b[j] == '"' {
		o.Key, o.Fold = b[i+1:j], high
		j++
	} else {
		end, esc, _, err := scanStringSlow(b, i, j)
		if err != nil {
			return false, err
		}
		o.Key = b[i+1 : end-1]
		o.Fold = esc || !isASCII(o.Key)
		j = end
	}
	i = SkipSpace(b, j)
	if i >= len(b) || b[i] != ':' {
		return false, syntaxError(i, "expected ':' after object key")
	}
	o.I = SkipSpace(b, i+1)
	o.N++
	return true, nil
}

// KeyIs reports whether the current key selects the field name (lower-case
// ASCII), matching exactly or case-insensitively as encoding/json does. It
// inlines into the readers' switches: most keys differ from the name in
// length, and a plain key (not Fold) of another length cannot match. A
// Fold key never equals the name byte for byte (the name has neither
// escapes nor non-ASCII bytes) but may match after unescaping and folding.
func (o *Object) KeyIs(name string) bool {
	if len(o.Key) != len(name) && !o.Fold {
		return false
	}
	return string(o.Key) == name || o.keyIsSlow(name)
}

// keyIsSlow is KeyIs for a key that is Fold or differs from the name only
// in case.
func (o *Object) keyIsSlow(name string) bool {
	if o.Fold {
		return foldedKeyIs(o.Key, name)
	}
	return asciiEqualFold(o.Key, name)
}

// Array walks the elements of one JSON array, like Object.
type Array struct {
	I    int // the offset of the current element; after the walk, the offset after ']'
	Room int // the room of the array's elements
	N    int // elements returned so far
}

// Open starts walking the array whose '[' is at b[i] with the given room.
func (a *Array) Open(b []byte, i, room int) error {
	if i >= len(b) || b[i] != '[' || room <= 0 {
		return openError(b, i, '[')
	}
	a.I, a.Room = i+1, room-1
	return nil
}

// Next advances to the next element; it returns false after the closing
// bracket.
func (a *Array) Next(b []byte) (bool, error) {
	i := SkipSpace(b, a.I)
	if i >= len(b) {
		return false, syntaxError(i, "unexpected end of input in array")
	}
	if b[i] == ']' {
		a.I = i + 1
		return false, nil
	}
	if a.N > 0 {
		if b[i] != ',' {
			return false, syntaxError(i, "expected ',' or ']' after array element")
		}
		i = SkipSpace(b, i+1)
	}
	a.I = i
	a.N++
	return true, nil
}

// The rest of this file is encoding/json's matching of member names to
// field names, in the one place the readers take it from.

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

// foldedKeyIs is the slow path of KeyIs for keys with escapes or non-ASCII
// bytes: encoding/json folds both sides (so U+017F matches 's' and U+212A
// matches 'k') and compares.
func foldedKeyIs(key []byte, name string) bool {
	var ub, fb [64]byte
	folded := appendFoldedName(fb[:0], Unquote(ub[:0], key))
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
