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

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// pcm24k is the format of the simulator's realtime audio.
var pcm24k = wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}

// wavOf is pcm as a whole WAV file in base64, as the chat fallback sends
// each delta.
func wavOf(pcm []byte) string { return base64.StdEncoding.EncodeToString(wav.Encode(pcm24k, pcm)) }

// withList inserts a LIST chunk between the fmt and data chunks of a
// canonical WAV file: a header longer than the measured path decodes.
func withList(file []byte) []byte {
	list := []byte("LIST\x1a\x00\x00\x00INFOISFT\x0e\x00\x00\x00omnibench test")
	out := append([]byte(nil), file[:36]...)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(file)-8+len(list)))
	out = append(out, list...)
	return append(out, file[36:]...)
}

// deltaOutcome is what a turn made of one audio delta per payload recorded.
type deltaOutcome struct {
	rec      results.Record
	bytes    int64
	failure  string
	measured int // deltas the turn measured from their length
}

// audioDelta is a realtime audio delta carrying payload.
func audioDelta(payload string) []byte {
	return []byte(`{"type":"response.output_audio.delta","response_id":"resp-1","delta":"` + payload + `"}`)
}

// deltaTurn feeds payloads to one realtime turn as audio deltas 80 ms
// apart, with sink as its audio sink (a sink makes it decode every delta).
func deltaTurn(t *testing.T, c *Client, payloads []string, sink io.Writer) deltaOutcome {
	rec := &results.Record{WS: &results.WSTurn{}}
	rt := &realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate}, rec: rec, sink: sink, t0: time.Unix(1000, 0)}
	var out deltaOutcome
	for i, p := range payloads {
		rt.events++
		var ev realtimeEvent
		if err := parseRealtimeEvent(audioDelta(p), &ev); err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
		if _, ok := rt.measure(&ev, ev.audioB64()); ok {
			out.measured++
		}
		at := time.Unix(1000, 0).Add(time.Duration(i+1) * 80 * time.Millisecond)
		if _, f := rt.event(message{typ: websocket.MessageText, data: audioDelta(p), at: at}); f != nil {
			out.failure = f.Error()
			break
		}
	}
	rec.WS = nil
	out.rec, out.bytes = *rec, rt.benchBytes
	return out
}

// sameOutcome fails t when a turn that may measure its deltas (measured)
// recorded anything other than one that decodes them all (decoded).
func sameOutcome(t *testing.T, name string, measured, decoded deltaOutcome) {
	t.Helper()
	if decoded.measured != 0 {
		t.Fatalf("%s: a turn with a sink measured %d deltas from their length", name, decoded.measured)
	}
	if measured.failure != decoded.failure || measured.bytes != decoded.bytes {
		t.Errorf("%s: measured %q, %d bytes; decoded %q, %d bytes", name, measured.failure, measured.bytes, decoded.failure, decoded.bytes)
	}
	m, d := measured.rec, decoded.rec
	if m.AudioBytes != d.AudioBytes || m.TTFAAudibleS != d.TTFAAudibleS || !slices.Equal(m.ChunkBytes, d.ChunkBytes) || !slices.Equal(m.ChunkArrivalsS, d.ChunkArrivalsS) {
		t.Errorf("%s: measured record %+v\ndecoded record %+v", name, m, d)
	}
}

// testTone is 80 ms of a loud 24 kHz tone, which the onset detector finds.
func testTone() []byte {
	tone := make([]byte, 3840)
	for i := 0; i < len(tone)/2; i++ {
		binary.LittleEndian.PutUint16(tone[2*i:], uint16(int16(12000*math.Sin(float64(i)/5))))
	}
	return tone
}

// TestRealtimeMeasuredChunksMatchDecoded checks that a turn whose onset is
// found measures its later audio deltas from their length, as the HTTP
// kinds do, and records what decoding them records: the same record, the
// same benchmark bytes and the same failures, against a turn that must
// decode every delta (a sink keeps the audio).
func TestRealtimeMeasuredChunksMatchDecoded(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1", Options{})
	silence, tone := make([]byte, 3840), testTone()
	enc := base64.StdEncoding.EncodeToString
	cases := map[string][]string{
		"plain":         {enc(silence), enc(tone), enc(tone), enc(tone[:3842-3840+100]), enc(silence)},
		"padded":        {enc(silence), enc(tone), enc(tone[:3838]), enc(tone[:3836])},
		"odd length":    {enc(silence), enc(tone), enc(tone[:101])},
		"unpadded":      {enc(silence), enc(tone), strings.TrimRight(enc(tone[:100]), "=")},
		"bad character": {enc(silence), enc(tone), "AAAA*AAA"},
		"line breaks":   {enc(silence), enc(tone), enc(tone[:24])[:16] + `\n` + enc(tone[:24])[16:]},
		"a WAV file":    {enc(silence), enc(tone), enc([]byte("RIFF0000WAVEfmt "))},
		// The chat fallback: every delta is a whole WAV file.
		"WAV deltas":         {wavOf(silence), wavOf(tone), wavOf(tone), wavOf(tone[:1000]), wavOf(silence)},
		"WAV odd data":       {wavOf(silence), wavOf(tone), wavOf(tone[:1001])},
		"WAV header only":    {wavOf(silence), wavOf(tone), wavOf(nil), wavOf(tone)},
		"WAV short data":     {wavOf(silence), wavOf(tone), enc(wav.AppendHeader(nil, pcm24k, 4000)) + enc(tone)[:5000]},
		"WAV streaming":      {wavOf(silence), wavOf(tone), enc(append(wav.AppendHeader(nil, pcm24k, 0xFFFFFFFF), tone...))},
		"WAV other rate":     {wavOf(silence), wavOf(tone), enc(wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, tone))},
		"WAV after pcm":      {enc(silence), enc(tone), wavOf(tone)},
		"pcm after WAV":      {wavOf(silence), wavOf(tone), enc(tone)},
		"WAV bad base64":     {wavOf(silence), wavOf(tone), wavOf(tone)[:200] + "*" + wavOf(tone)[201:]},
		"WAV unpadded":       {wavOf(silence), wavOf(tone), strings.TrimRight(wavOf(tone[:1000]), "=")},
		"WAV in a LIST file": {wavOf(silence), wavOf(tone), enc(withList(wav.Encode(pcm24k, tone)))},
	}
	for name, payloads := range cases {
		decoded, measured := deltaTurn(t, c, payloads, io.Discard), deltaTurn(t, c, payloads, nil)
		sameOutcome(t, name, measured, decoded)
		if strings.HasSuffix(name, "unpadded") && decoded.failure != "" {
			// The HTTP kinds accept unpadded base64 (client.DecodeBase64);
			// the WebSocket kinds must not refuse what they take.
			t.Errorf("%s: refused: %s", name, decoded.failure)
		}
		if (name == "plain" || name == "WAV deltas") && measured.measured < 2 {
			t.Errorf("%s: only %d deltas measured from their length after the onset", name, measured.measured)
		}
	}
}

// FuzzRealtimeMeasuredMatchesDecoded is the test above on any third delta:
// after a silent and a loud delta (both WAV files, or both headerless PCM)
// the turn measures what it may, and must record what decoding records.
// The third payload is the base64 of any bytes (seeded with WAV files of
// every shape), unpadded or with one character spoilt as the fuzzer picks.
func FuzzRealtimeMeasuredMatchesDecoded(f *testing.F) {
	tone := testTone()
	f.Add(true, wav.Encode(pcm24k, tone), uint8(0))
	f.Add(true, wav.Encode(pcm24k, tone[:1001]), uint8(1))
	f.Add(true, wav.AppendHeader(nil, pcm24k, 0xFFFFFFFF), uint8(0))
	f.Add(true, append(wav.AppendHeader(nil, pcm24k, 4000), tone...), uint8(0))
	f.Add(true, withList(wav.Encode(pcm24k, tone)), uint8(0))
	f.Add(true, wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, tone), uint8(0))
	f.Add(true, wav.Encode(pcm24k, tone), uint8(200))
	f.Add(false, tone[:101], uint8(0))
	f.Add(false, wav.Encode(pcm24k, tone), uint8(1))
	c := newClient(f, "http://127.0.0.1:1", Options{})
	f.Fuzz(func(t *testing.T, wavDeltas bool, data []byte, spoil uint8) {
		if len(data) > 1<<14 {
			return
		}
		enc := base64.StdEncoding.EncodeToString
		first, second := enc(make([]byte, 3840)), enc(tone)
		if wavDeltas {
			first, second = wavOf(make([]byte, 3840)), wavOf(tone)
		}
		third := enc(data)
		switch {
		case spoil == 1:
			third = strings.TrimRight(third, "=")
		case spoil > 1 && third != "":
			at := int(spoil) % len(third)
			third = third[:at] + "*" + third[at+1:]
		}
		payloads := []string{first, second, third}
		sameOutcome(t, "fuzzed", deltaTurn(t, c, payloads, nil), deltaTurn(t, c, payloads, io.Discard))
	})
}
