package wsclient

import (
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestRealtimeMeasuredChunksMatchDecoded checks that a turn whose onset is
// found measures its later audio deltas from their length, as the HTTP
// kinds do, and records what decoding them records: the same record, the
// same benchmark bytes and the same failures, against a turn that must
// decode every delta (a sink keeps the audio).
func TestRealtimeMeasuredChunksMatchDecoded(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1", Options{})
	silence := make([]byte, 3840)
	tone := make([]byte, 3840)
	for i := 0; i < len(tone)/2; i++ {
		binary.LittleEndian.PutUint16(tone[2*i:], uint16(int16(12000*math.Sin(float64(i)/5))))
	}
	enc := base64.StdEncoding.EncodeToString
	delta := func(payload string) []byte {
		return []byte(`{"type":"response.output_audio.delta","response_id":"resp-1","delta":"` + payload + `"}`)
	}
	cases := map[string][]string{
		"plain":         {enc(silence), enc(tone), enc(tone), enc(tone[:3842-3840+100]), enc(silence)},
		"padded":        {enc(silence), enc(tone), enc(tone[:3838]), enc(tone[:3836])},
		"odd length":    {enc(silence), enc(tone), enc(tone[:101])},
		"unpadded":      {enc(silence), enc(tone), strings.TrimRight(enc(tone[:100]), "=")},
		"bad character": {enc(silence), enc(tone), "AAAA*AAA"},
		"line breaks":   {enc(silence), enc(tone), enc(tone[:24])[:16] + `\n` + enc(tone[:24])[16:]},
		"a WAV file":    {enc(silence), enc(tone), enc([]byte("RIFF0000WAVEfmt "))},
	}
	for name, payloads := range cases {
		type outcome struct {
			rec      results.Record
			bytes    int64
			failure  string
			measured int
		}
		turn := func(sink io.Writer) outcome {
			rec := &results.Record{WS: &results.WSTurn{}}
			rt := &realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate}, rec: rec, sink: sink, t0: time.Unix(1000, 0)}
			var out outcome
			for i, p := range payloads {
				rt.events++
				var ev realtimeEvent
				if err := parseRealtimeEvent(delta(p), &ev); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if _, ok := rt.measurable(ev.audioB64()); ok {
					out.measured++
				}
				at := time.Unix(1000, 0).Add(time.Duration(i+1) * 80 * time.Millisecond)
				if _, f := rt.event(message{typ: websocket.MessageText, data: delta(p), at: at}); f != nil {
					out.failure = f.Error()
					break
				}
			}
			rec.WS = nil
			out.rec, out.bytes = *rec, rt.benchBytes
			return out
		}
		decoded, measured := turn(io.Discard), turn(nil)
		if decoded.measured != 0 {
			t.Fatalf("%s: a turn with a sink measured %d deltas from their length", name, decoded.measured)
		}
		if name == "plain" && measured.measured < 2 {
			t.Errorf("%s: only %d deltas measured from their length after the onset", name, measured.measured)
		}
		if measured.failure != decoded.failure || measured.bytes != decoded.bytes {
			t.Errorf("%s: measured %q, %d bytes; decoded %q, %d bytes", name, measured.failure, measured.bytes, decoded.failure, decoded.bytes)
		}
		m, d := measured.rec, decoded.rec
		if m.AudioBytes != d.AudioBytes || m.TTFAAudibleS != d.TTFAAudibleS || !slices.Equal(m.ChunkBytes, d.ChunkBytes) || !slices.Equal(m.ChunkArrivalsS, d.ChunkArrivalsS) {
			t.Errorf("%s: measured record %+v\ndecoded record %+v", name, m, d)
		}
	}
}
