// Package bytescan finds the bytes that end a run in the parsers of network
// input: the line end of an event stream, the end of a JSON string, the end
// of the base64 alphabet. Each scan reads 32 bytes per step with AVX2 where
// the processor has it (amd64), and falls back to the standard library's
// vectorised IndexByte and word-wide tests elsewhere; both give the same
// answers (the tests compare them with a byte loop on every byte value at
// every position). A streaming client reads each audio event (5 KB of
// base64 per 80 ms) once per scan, so one pass instead of two or three is
// what keeps its cost close to that of a bare read loop.
package bytescan

import (
	"bytes"
	"encoding/binary"
)

// EOL returns the index of the first '\n' or '\r' in b, or -1.
func EOL(b []byte) int {
	if hasAVX2 && len(b) >= 32 {
		n := len(b) &^ 31
		if k := eolAVX2(b[:n]); k >= 0 {
			return k
		}
		if k := eolPortable(b[n:]); k >= 0 {
			return n + k
		}
		return -1
	}
	return eolPortable(b)
}

// eolPortable is EOL with two IndexByte scans, the second only up to the
// hit of the first.
func eolPortable(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}

// StringEnd returns the index of the first byte of b that ends a plain run
// of a JSON string: '"', '\\' or a control character below 0x20; -1 when
// there is none. Plain is the length of the run of standard base64
// alphabet characters at the start of b (at most end, or len(b) when end is
// -1), or -1 where it was not measured (without AVX2); a caller that needs
// it then calls Base64Alphabet.
func StringEnd(b []byte) (end, plain int) {
	if !hasAVX2 || len(b) < 32 {
		return stringEndPortable(b), -1
	}
	n := len(b) &^ 31
	end, plain = stringEndAVX2(b[:n])
	if end >= 0 {
		return end, plain
	}
	end = stringEndPortable(b[n:])
	if end >= 0 {
		end += n
	}
	if plain < 0 { // the whole blocks are all alphabet: measure the tail
		lim := len(b)
		if end >= 0 {
			lim = end
		}
		plain = n + alphabetRun(b[n:lim])
	}
	return end, plain
}

// stringEndPortable is StringEnd's end with three vectorised or word-wide
// scans, each only up to the hit of the previous one.
func stringEndPortable(b []byte) int {
	end := len(b)
	if k := bytes.IndexByte(b, '"'); k >= 0 {
		end = k
	}
	if k := bytes.IndexByte(b[:end], '\\'); k >= 0 {
		end = k
	}
	if k := IndexControl(b[:end]); k >= 0 {
		end = k
	}
	if end == len(b) {
		return -1
	}
	return end
}

// IndexControl returns the index of the first byte below 0x20 in b, or -1.
// It tests eight bytes per word: (x - 0x20 in each byte) & ^x has a byte's
// high bit set exactly when some byte of x is below 0x20 (a borrow only
// starts at a true hit, so the word test is exact), four words per step.
func IndexControl(b []byte) int {
	const ones = 0x2020202020202020
	i := 0
	for ; len(b)-i >= 32; i += 32 {
		w := b[i : i+32 : i+32]
		x0 := binary.LittleEndian.Uint64(w[0:8])
		x1 := binary.LittleEndian.Uint64(w[8:16])
		x2 := binary.LittleEndian.Uint64(w[16:24])
		x3 := binary.LittleEndian.Uint64(w[24:32])
		if ((x0-ones)&^x0|(x1-ones)&^x1|(x2-ones)&^x2|(x3-ones)&^x3)&highBits != 0 {
			break
		}
	}
	for ; len(b)-i >= 8; i += 8 {
		if x := binary.LittleEndian.Uint64(b[i : i+8]); (x-ones)&^x&highBits != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

// Base64Alphabet reports whether every byte of b is one of the 64
// characters of the standard base64 alphabet (A-Z, a-z, 0-9, '+', '/').
func Base64Alphabet(b []byte) bool {
	if hasAVX2 && len(b) >= 32 {
		n := len(b) &^ 31
		if !alphabetAVX2(b[:n]) {
			return false
		}
		b = b[n:]
	}
	return alphabetWords(b)
}

// alphabetRun is the length of the run of alphabet characters at the start
// of b, a byte at a time (for tails shorter than a block).
func alphabetRun(b []byte) int {
	for i, c := range b {
		if !isAlphabet(c) {
			return i
		}
	}
	return len(b)
}

func isAlphabet(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// alphabetWords is Base64Alphabet eight bytes per step: a byte is valid
// when it is ASCII and falls in one of 'A'-'Z'/'a'-'z' (folded together by
// setting bit 5), '/'-'9' (the slash sits just below the digits) or '+'.
// Each range test adds a per-byte constant that sets the byte's top bit
// exactly when the byte is at least the range's low end (or above its high
// end); within a word of ASCII bytes no addition carries into the next
// byte, because every byte is below 0x80 and every constant at most 0x80 (a
// word with a non-ASCII byte fails whatever its other bytes give).
func alphabetWords(b []byte) bool {
	i := 0
	for ; len(b)-i >= 32; i += 32 {
		w := (*[32]byte)(b[i:])
		ok := alphabetMask(binary.LittleEndian.Uint64(w[0:])) &
			alphabetMask(binary.LittleEndian.Uint64(w[8:])) &
			alphabetMask(binary.LittleEndian.Uint64(w[16:])) &
			alphabetMask(binary.LittleEndian.Uint64(w[24:]))
		if ok != highBits {
			return false
		}
	}
	for ; len(b)-i >= 8; i += 8 {
		if alphabetMask(binary.LittleEndian.Uint64(b[i:])) != highBits {
			return false
		}
	}
	return alphabetRun(b[i:]) == len(b)-i
}

// alphabetMask has the top bit of each byte set where that byte of x is a
// base64 alphabet character, and no other bits.
func alphabetMask(x uint64) uint64 {
	ascii := ^x & highBits
	folded := x | 0x2020202020202020
	letters := (folded + (0x80-'a')*lowBits) &^ (folded + (0x7F-'z')*lowBits)
	digits := (x + (0x80-'/')*lowBits) &^ (x + (0x7F-'9')*lowBits)
	plus := (x + (0x80-'+')*lowBits) &^ (x + (0x7F-'+')*lowBits)
	return (letters | digits | plus) & ascii
}
