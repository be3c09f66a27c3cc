package client

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/bytescan"
)

// Base64 decoding is the largest cost of an audio event whose samples are
// needed (the audible onset, --save-audio; an 80 ms chunk is 5.2 KB of
// base64), so the bulk of such a payload goes through a table-driven decoder
// that turns 8 characters into 6 bytes with one 64-bit load, eight lookups
// in pre-shifted tables and one 64-bit store. It stays because it is
// measurably faster: BenchmarkBase64 (client against encoding-base64, one
// 80 ms WAV event) took 1.2 to 1.4 times less time with it on this project's
// loaded test machine. Everything unusual (padding, line breaks, invalid
// characters, the last quantum) is left to encoding/base64, which therefore
// decides what is valid and words the errors; the fuzz test checks that the
// two agree.
//
// After the onset nothing reads the samples: plainBase64Len checks the
// payload and measures it without decoding, and decodePlainHead decodes the
// few header bytes with encoding/base64 alone.

// b64Tables holds, for each of the four positions of a quantum, the 6-bit
// value of every character already shifted into place; invalid characters
// (including '=' and line breaks) have the top byte set. Built once at
// package initialisation and only read afterwards.
var b64Tables = buildB64Tables()

func buildB64Tables() (t [4][256]uint32) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for p := range t {
		for c := range t[p] {
			t[p][c] = 0xFF000000
		}
	}
	for v := range len(alphabet) {
		c := alphabet[v]
		t[0][c] = uint32(v) << 18
		t[1][c] = uint32(v) << 12
		t[2][c] = uint32(v) << 6
		t[3][c] = uint32(v)
	}
	return t
}

// decodePlainHead decodes the first characters of a payload that
// plainBase64Len accepted (whole quanta, padded only at the payload's end)
// into *dst, grown as needed and reused: the few header bytes the measured
// path reads. It is encoding/base64 alone, since the table-driven loop of
// DecodeBase64 pays off only on whole payloads (it leaves the last quantum
// to encoding/base64 anyway, which is most of a 64-character head).
func decodePlainHead(dst *[]byte, src []byte) ([]byte, error) {
	need := base64.StdEncoding.DecodedLen(len(src))
	if cap(*dst) < need {
		*dst = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode((*dst)[:need], src)
	if err != nil {
		return nil, fmt.Errorf("audio header: %w", err)
	}
	return (*dst)[:n], nil
}

// DecodeBase64 decodes src into *dst (grown as needed and reused) and
// returns the decoded bytes. Padded (StdEncoding) and unpadded
// (RawStdEncoding) input are both accepted; line breaks are ignored, as
// encoding/base64 does. URL-safe base64 is not accepted. It is how every
// request kind decodes the audio a server sends, so that one payload is
// accepted or refused alike over HTTP and WebSocket.
func DecodeBase64(dst *[]byte, src []byte) ([]byte, error) {
	enc := base64.StdEncoding
	if n := len(src); n%4 != 0 && src[n-1] != '=' && bytes.IndexByte(src, '\n') < 0 && bytes.IndexByte(src, '\r') < 0 {
		enc = base64.RawStdEncoding
	}
	// +8: the fast loop stores 8 bytes to advance by 6.
	need := enc.DecodedLen(len(src)) + 8
	if cap(*dst) < need {
		*dst = make([]byte, need+need/4)
	}
	out := (*dst)[:need]
	si, di := fastDecode(out, src)
	n, err := enc.Decode(out[di:], src[si:])
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return nil, base64.CorruptInputError(int64(si) + int64(ce))
		}
		return nil, err
	}
	return out[:di+n], nil
}

// fastDecode decodes whole 8-character groups of plain alphabet characters
// from the start of src, stopping before the last quantum (so that padding
// is always left to encoding/base64) or at anything else. It returns how
// many characters it consumed and bytes it wrote; dst must have 8 bytes of
// room beyond the decoded length.
func fastDecode(dst, src []byte) (si, di int) {
	t0, t1, t2, t3 := &b64Tables[0], &b64Tables[1], &b64Tables[2], &b64Tables[3]
	// Two groups per iteration: one validity branch per 16 characters.
	for len(src)-si > 20 && len(dst)-di >= 14 {
		s := (*[16]byte)(src[si:])
		x := t0[s[0]] | t1[s[1]] | t2[s[2]] | t3[s[3]]
		y := t0[s[4]] | t1[s[5]] | t2[s[6]] | t3[s[7]]
		u := t0[s[8]] | t1[s[9]] | t2[s[10]] | t3[s[11]]
		v := t0[s[12]] | t1[s[13]] | t2[s[14]] | t3[s[15]]
		if (x|y|u|v)&0xFF000000 != 0 {
			break
		}
		d := (*[14]byte)(dst[di:])
		binary.BigEndian.PutUint64(d[:8], uint64(x)<<40|uint64(y)<<16)
		binary.BigEndian.PutUint64(d[6:], uint64(u)<<40|uint64(v)<<16)
		si += 16
		di += 12
	}
	return si, di
}

// PlainBase64Len is plainBase64Len for a caller without its own scan of
// the payload: the decoded length of src when src is base64 in its plain
// form, false for anything the caller must decode to judge.
func PlainBase64Len(src []byte) (int, bool) { return plainBase64Len(src, -1) }

// wavHeadChars is how much of a base64 WAV file WAVBase64PCMLen decodes
// for its header: 48 bytes, a canonical 44-byte header and the first PCM
// bytes (the header must end before the decoded bytes do). A longer header
// (a LIST chunk, an extensible fmt chunk) takes the full path.
const wavHeadChars = 64

// WAVBase64PCMLen measures a whole WAV file given as plain base64 (src,
// size bytes decoded, as PlainBase64Len measured it) by decoding only its
// first characters into *scratch (grown as needed and reused): its header
// and the length of its PCM data, as wav.Decode of the decoded file would
// take them. It reports false when the caller must decode the file to
// judge it: a short file, a header it cannot read from those characters.
// It is the measured path for audio deltas that are each a WAV file (chat
// events, and the realtime deltas of the chat fallback), once nothing
// reads their samples.
func WAVBase64PCMLen(scratch *[]byte, src []byte, size int) (wav.Header, int, bool) {
	if len(src) <= wavHeadChars+4 {
		return wav.Header{}, 0, false // small enough to decode; keeps padding out of the head
	}
	head, err := decodePlainHead(scratch, src[:wavHeadChars])
	if err != nil {
		return wav.Header{}, 0, false // not reached for plain base64
	}
	h, err := wav.ParseHeader(head)
	if err != nil || h.DataOffset >= len(head) {
		return wav.Header{}, 0, false
	}
	n, err := h.PCMLen(size)
	if err != nil {
		return wav.Header{}, 0, false
	}
	return h, n, true
}

// plainBase64Len returns the decoded length of src when src is base64 in
// its plain form: alphabet characters, then at most two '=' that pad it to
// a multiple of four, or no padding at all (RawStdEncoding). It reports
// false for anything else (line breaks, characters outside the alphabet,
// misplaced padding, a lone trailing character), and the caller then
// decodes src with DecodeBase64, which words the error or handles the
// unusual form. Whatever it accepts, DecodeBase64 accepts with the same
// length (FuzzPlainBase64Len checks it).
//
// It exists because most audio events need only their length: validating
// eight characters with a few word-wide operations costs a fraction of
// decoding them, and after the audible onset nothing reads the samples.
//
// plain, when not negative, is the length of the run of alphabet characters
// at the start of src, already measured by the caller's scan.
func plainBase64Len(src []byte, plain int) (int, bool) {
	n := len(src)
	pad := 0
	for pad < 2 && n-pad > 0 && src[n-pad-1] == '=' {
		pad++
	}
	body := n - pad
	switch {
	case pad > 0 && n%4 != 0, body%4 == 1:
		return 0, false
	}
	if plain >= 0 && plain < body || plain < 0 && !bytescan.Base64Alphabet(src[:body]) {
		return 0, false
	}
	return body/4*3 + max(body%4-1, 0), true
}
