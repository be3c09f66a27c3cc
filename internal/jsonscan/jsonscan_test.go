package jsonscan

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// skips reports whether SkipValue takes all of b as one value (white space
// around it allowed), as json.Valid decides.
func skips(b []byte, room int) bool {
	end, err := SkipValue(b, SkipSpace(b, 0), room)
	return err == nil && Finish(b, end) == nil
}

// validCases are values at the walk's edges; json.Valid is the reference.
var validCases = []string{
	`{}`, `[]`, ` {"a" : [1 , -0 , 0.5e-3 , 1E+2 , true , false , null , "s" , {} , [] ] } `,
	`"` + strings.Repeat("QUJD", 100) + `"`, `"a\"b\\c\/d\b\f\n\r\tu\u00e9\uD83D\uDE00"`,
	"\"caf\xe9 \xff\x7f\"", `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`,
	`01`, `-`, `1.`, `1e`, `1e+`, `.5`, `+1`, `tru`, `nul`, `falsey`, `"\x"`, `"\u12G4"`,
	"\"a\x01b\"", "\"" + strings.Repeat("x", 30) + "\t\"", `"ab\`, `"abc`, `{"a":1}}`, `[`, `{`, ``,
	"\"0123456789abcdefghijklmn\x1f", `{"a":"b"`, `{"a":}`, "[1]\x00",
}

func TestSkipValueAgreesWithValid(t *testing.T) {
	for _, in := range validCases {
		if got, want := skips([]byte(in), MaxDepth), json.Valid([]byte(in)); got != want {
			t.Errorf("%q: skipped %v, json.Valid says %v", in, got, want)
		}
	}
}

// TestRoom checks the nesting bound: MaxDepth containers are taken, one
// more is refused, as encoding/json refuses it; a smaller room refuses
// what is deeper than it, at the offset of the first bracket too deep.
func TestRoom(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		closing := "]"
		if open != "[" {
			closing = "}"
		}
		nest := func(n int) []byte { return []byte(strings.Repeat(open, n) + "1" + strings.Repeat(closing, n)) }
		for _, n := range []int{MaxDepth, MaxDepth + 1} {
			if got, want := skips(nest(n), MaxDepth), json.Valid(nest(n)); got != want {
				t.Errorf("%s x %d: skipped %v, json.Valid says %v", open, n, got, want)
			}
		}
		if !skips(nest(3), 3) {
			t.Errorf("%s x 3 refused with room 3", open)
		}
		_, err := SkipValue(nest(4), 0, 3)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != 3*len(open) || !strings.Contains(err.Error(), "nesting deeper") {
			t.Errorf("%s x 4 with room 3: %v, want a nesting error at byte %d", open, err, 3*len(open))
		}
	}
}

func TestSyntaxErrorNamesOffset(t *testing.T) {
	_, err := SkipValue([]byte(`{"a":[1,2,}`), 0, MaxDepth)
	if err == nil || err.Error() != "invalid JSON at byte 10: unexpected character '}', expected a value" {
		t.Errorf("error %v", err)
	}
}

// TestParseInt guards the hand-written integer parser against strconv.
func TestParseInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "42", "-42", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "99999999999999999999"} {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, ok := ParseInt([]byte(s))
		if ok != (werr == nil) || (ok && got != want) {
			t.Errorf("%s: %d %v, strconv says %d %v", s, got, ok, want, werr)
		}
	}
}

func TestScanStringUnquote(t *testing.T) {
	for _, tc := range []struct {
		in    string
		esc   bool
		plain int
	}{
		{`"abc"`, false, -1},
		{`"a\/b\u00e9\ud800x"`, true, -1},
		{`"` + strings.Repeat("QUJD", 40) + `"`, false, -2}, // plain measured or not, by the processor
	} {
		b := []byte(tc.in + " ")
		end, esc, plain, err := ScanString(b, 0)
		if err != nil || end != len(tc.in) || esc != tc.esc || (tc.plain != -2 && plain != tc.plain) {
			t.Errorf("%q: end %d esc %v plain %d err %v", tc.in, end, esc, plain, err)
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(tc.in), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(Unquote(nil, b[1:end-1])); got != want {
			t.Errorf("%q: unquoted %q, encoding/json %q", tc.in, got, want)
		}
	}
}

// keyMatches reports whether encoding/json sets the field named name (one
// of probeNames) from {key:1}, where key is the key as written; valid is
// false when encoding/json refuses the document.
func keyMatches(key []byte, name string) (matches, valid bool) {
	var p struct {
		Type  *int `json:"type"`
		Rate  *int `json:"sample_rate_hz"`
		Kelly *int `json:"kelly"`
	}
	if json.Unmarshal(append(append([]byte(`{"`), key...), `":1}`...), &p) != nil {
		return false, false
	}
	switch name {
	case "type":
		return p.Type != nil, true
	case "sample_rate_hz":
		return p.Rate != nil, true
	default:
		return p.Kelly != nil, true
	}
}

// probeNames are the field names of keyMatches' probe.
var probeNames = []string{"type", "sample_rate_hz", "kelly"}

// checkKeyIs fails t unless Object.KeyIs matches the key of {key:1} to each
// probe name exactly when encoding/json does.
func checkKeyIs(t *testing.T, key []byte) {
	t.Helper()
	doc := append(append([]byte(`{"`), key...), `":1}`...)
	var o Object
	if o.Open(doc, 0, MaxDepth) != nil {
		t.Fatal("open")
	}
	more, err := o.Next(doc)
	for _, name := range probeNames {
		want, valid := keyMatches(key, name)
		if !valid {
			if err == nil && more && skips(doc, MaxDepth) {
				t.Fatalf("%q: walked, encoding/json refuses it", doc)
			}
			return
		}
		if err != nil || !more {
			t.Fatalf("%q: %v, encoding/json takes it", doc, err)
		}
		if got := o.KeyIs(name); got != want {
			t.Errorf("%q: KeyIs(%q) %v, encoding/json %v", key, name, got, want)
		}
	}
}

func TestKeyIsAgreesWithEncodingJSON(t *testing.T) {
	for _, key := range []string{
		"type", "TYPE", "tYpE", "types", "typ", `\u0074ype`, `\u0054YPE`, "sample_rate_hz", "ſample_rate_hz",
		"SAMPLE_RATE_HZ", "\u212aelly", "kelly", "KELLY", "Kelly\xff", "\xff", `\ud800`, "", "t\\\"ype",
	} {
		checkKeyIs(t, []byte(key))
	}
}

// maxFuzzInput bounds the fuzzers' inputs, so that each run stays short.
const maxFuzzInput = 4096

// FuzzSkipValue checks that SkipValue takes a value exactly when json.Valid
// does.
func FuzzSkipValue(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		if got, want := skips(b, MaxDepth), json.Valid(b); got != want {
			t.Errorf("%q: skipped %v, json.Valid says %v", b, got, want)
		}
	})
}

// FuzzKeyIs checks Object.KeyIs against encoding/json's matching of member
// names to struct fields.
func FuzzKeyIs(f *testing.F) {
	for _, key := range []string{"type", "TyPe", `\u0074ype`, "ſample_rate_hz", "\u212aelly", "k\xffelly"} {
		f.Add([]byte(key))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		if len(key) > 64 {
			return
		}
		checkKeyIs(t, key)
	})
}
