package wsclient

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// audioB64Sample is the base64 of 80 ms of 24 kHz PCM16, the size of a
// simulator chunk.
var audioB64Sample = base64.StdEncoding.EncodeToString(make([]byte, 3840))

// TestParseAudioDeltaFastPath checks that audio deltas as servers send
// them (the GA and legacy names, the plain endpoint's "audio" after its
// payload) skip json.Unmarshal of the payload, and that what comes out is
// what json.Unmarshal of the whole message gives; and that messages the
// fast path cannot read exactly fall back.
func TestParseAudioDeltaFastPath(t *testing.T) {
	fast := []string{
		`{"type":"response.output_audio.delta","response_id":"resp_1","item_id":"item_1","output_index":0,"content_index":0,"delta":"` + audioB64Sample + `","sample_rate_hz":24000}`,
		`{"type":"response.audio.delta","delta":"` + audioB64Sample + `"}`,
		`{"audio":"` + audioB64Sample + `","type":"response.audio.delta"}`,
		`{"type":"x","delta":"` + strings.Repeat("A", 300) + `","audio":"` + audioB64Sample + `"}`, // the first cut, the other decoded
	}
	slow := []string{
		`{"type":"response.output_audio.delta","delta":"AAAA"}`,         // too short to cut
		`{"type":"x","event":{"delta":"` + audioB64Sample + `"}}`,       // not the top-level member
		`{"type":"x","delta":"` + audioB64Sample + `","Delta":"AAAA"}`,  // a later duplicate wins
		`{"type":"x","delta":"` + audioB64Sample + `\/"}`,               // an escape in the payload
		`{"type":"x","note":"\u0000","delta":"` + audioB64Sample + `"}`, // the sentinel's text already there
		`{"type":"x","delta":"` + audioB64Sample + `",}`,                // not JSON
		`{"type":"x","text":"\"delta\":\"` + audioB64Sample + `\""}`,    // inside a string
		`{"type":"x","delta":"` + audioB64Sample + `"`,                  // truncated
	}
	for i, msg := range append(fast, slow...) {
		_, took := parseAudioDelta([]byte(msg))
		if want := i < len(fast); took != want {
			t.Errorf("message %d: fast path %v, want %v", i, took, want)
		}
		checkSameAsUnmarshal(t, []byte(msg))
	}
}

// checkSameAsUnmarshal fails t unless parseRealtimeMsg gives what
// json.Unmarshal of the whole message does: both fail, or both decode the
// same event.
func checkSameAsUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseRealtimeMsg(data)
	var want realtimeMsg
	wantErr := json.Unmarshal(data, &want)
	switch {
	case wantErr != nil || want.Type == "":
		if err == nil {
			t.Fatalf("%q: accepted; json.Unmarshal gives %v, type %q", data, wantErr, want.Type)
		}
	case err != nil:
		t.Fatalf("%q: %v; json.Unmarshal accepts it", data, err)
	case !reflect.DeepEqual(*got, want):
		t.Fatalf("%q: decoded as %+v, json.Unmarshal gives %+v", data, *got, want)
	}
}

// FuzzParseRealtimeMsgMatchesUnmarshal checks the audio-delta fast path
// against json.Unmarshal on arbitrary messages, seeded with deltas large
// enough to take it.
func FuzzParseRealtimeMsgMatchesUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_audio.delta","delta":"` + audioB64Sample + `"}`,
		`{"audio":"` + audioB64Sample + `","type":"response.audio.delta"}`,
		`{"type":"x","event":{"delta":"` + audioB64Sample + `"},"delta":"` + audioB64Sample + `"}`,
		`{"type":"x","delta":"` + audioB64Sample + `","DELTA":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkSameAsUnmarshal(t, data) })
}

// TestParseRealtimeMsgMutations checks the fast path against
// json.Unmarshal on messages near its edges: each seed with a byte
// replaced by one of JSON's structural characters at a pseudo-random
// place (a fixed sequence, so failures repeat).
func TestParseRealtimeMsgMutations(t *testing.T) {
	seeds := []string{
		`{"type":"response.output_audio.delta","response_id":"r","delta":"` + audioB64Sample[:400] + `","sample_rate_hz":24000}`,
		`{"audio":"` + audioB64Sample[:400] + `","type":"response.audio.delta","event":{"delta":"AAAA"}}`,
	}
	const swaps = `"\:,{}[] u0Da`
	x := uint32(1)
	for _, seed := range seeds {
		for range 3000 {
			x ^= x << 13 // xorshift32
			x ^= x >> 17
			x ^= x << 5
			msg := []byte(seed)
			at := int(x % uint32(len(msg)))
			if at >= 60 && at < 430 && x%4 != 0 { // mostly near the payload's ends
				at = 60 + int(x%8)
			}
			msg[at] = swaps[(x>>8)%uint32(len(swaps))]
			checkSameAsUnmarshal(t, msg)
		}
	}
}
