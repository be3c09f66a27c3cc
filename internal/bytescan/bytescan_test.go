package bytescan

import (
	"bytes"
	"strings"
	"testing"
)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// The references: byte loops that say what each scan means.

func refEOL(b []byte) int { return bytes.IndexAny(b, "\r\n") }

func refStringEnd(b []byte) (end, plain int) {
	end = -1
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			end = i
			break
		}
	}
	lim := len(b)
	if end >= 0 {
		lim = end
	}
	plain = lim
	for i, c := range b[:lim] {
		if strings.IndexByte(alphabet, c) < 0 {
			plain = i
			break
		}
	}
	return end, plain
}

func refAlphabet(b []byte) bool {
	for _, c := range b {
		if strings.IndexByte(alphabet, c) < 0 {
			return false
		}
	}
	return true
}

func refControl(b []byte) int {
	for i, c := range b {
		if c < 0x20 {
			return i
		}
	}
	return -1
}

// check compares every scan, the dispatched one and the portable one,
// with the references on b.
func check(t *testing.T, b []byte) {
	t.Helper()
	if got, want := EOL(b), refEOL(b); got != want {
		t.Fatalf("EOL(%q) = %d, want %d", b, got, want)
	}
	if got, want := eolPortable(b), refEOL(b); got != want {
		t.Fatalf("eolPortable(%q) = %d, want %d", b, got, want)
	}
	wantEnd, wantPlain := refStringEnd(b)
	end, plain := StringEnd(b)
	if end != wantEnd || (plain != -1 && plain != wantPlain) {
		t.Fatalf("StringEnd(%q) = %d, %d; want %d, %d", b, end, plain, wantEnd, wantPlain)
	}
	if hasAVX2 && len(b) >= 32 && plain == -1 {
		t.Fatalf("StringEnd(%q): plain not measured with AVX2", b)
	}
	if got := stringEndPortable(b); got != wantEnd {
		t.Fatalf("stringEndPortable(%q) = %d, want %d", b, got, wantEnd)
	}
	if got, want := Base64Alphabet(b), refAlphabet(b); got != want {
		t.Fatalf("Base64Alphabet(%q) = %v, want %v", b, got, want)
	}
	if got, want := alphabetWords(b), refAlphabet(b); got != want {
		t.Fatalf("alphabetWords(%q) = %v, want %v", b, got, want)
	}
	if got, want := IndexControl(b), refControl(b); got != want {
		t.Fatalf("IndexControl(%q) = %d, want %d", b, got, want)
	}
}

// TestEveryByteEveryPosition puts each byte value at each position of
// inputs that span zero to three blocks and a tail, over fillers that are
// all alphabet, and alphabet with non-ASCII bytes, so that every lane of
// the word-wide and vector tests meets every value, next to every kind of
// neighbour.
func TestEveryByteEveryPosition(t *testing.T) {
	for _, filler := range []string{"QUJD+/09az", "QUJD\x80\xff~ =-"} {
		for _, size := range []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 95, 96, 97, 100, 128, 129, 161} {
			base := bytes.Repeat([]byte(filler), size)[:size]
			check(t, base)
			for pos := range size {
				for c := range 256 {
					b := bytes.Clone(base)
					b[pos] = byte(c)
					check(t, b)
				}
			}
		}
	}
}

// TestTwoHits puts two terminators in one input, in the same block and in
// different blocks, so the first one wins.
func TestTwoHits(t *testing.T) {
	for _, size := range []int{40, 70, 100, 130} {
		for i := range size {
			for j := i + 1; j < size; j += 3 {
				for _, pair := range [][2]byte{{'\n', '\r'}, {'\r', '\n'}, {'"', '\\'}, {'=', '"'}, {0x01, '"'}, {'-', '='}} {
					b := bytes.Repeat([]byte("QUJD"), size)[:size]
					b[i], b[j] = pair[0], pair[1]
					check(t, b)
				}
			}
		}
	}
}

func FuzzScans(f *testing.F) {
	for _, s := range []string{"", "abc", "QUJD\"", strings.Repeat("QUJD", 20) + "==\"x", "a\rb\nc", strings.Repeat("x", 40) + "\\\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, b) })
}

func BenchmarkScans(b *testing.B) {
	// A 5 KB base64 audio payload and the JSON that closes it.
	event := []byte(strings.Repeat("QUJDREVG", 5120/8) + `"}}]`)
	for _, bc := range []struct {
		name string
		in   []byte
		scan func([]byte)
	}{
		{"StringEnd", event, func(b []byte) { StringEnd(b) }},
		{"stringEndPortable", event, func(b []byte) { stringEndPortable(b) }},
		{"EOL", event, func(b []byte) { EOL(b) }},
		{"eolPortable", event, func(b []byte) { eolPortable(b) }},
		{"Base64Alphabet", event[:5120], func(b []byte) { Base64Alphabet(b) }},
		{"alphabetWords", event[:5120], func(b []byte) { alphabetWords(b) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				bc.scan(bc.in)
			}
		})
	}
}
