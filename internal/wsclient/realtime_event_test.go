package wsclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// audioB64Sample is the base64 of 80 ms of 24 kHz PCM16, the size of a
// simulator chunk.
var audioB64Sample = base64.StdEncoding.EncodeToString(make([]byte, 3840))

// checkSameAsUnmarshal fails t unless the hand reader, whenever it takes
// data, gives what json.Unmarshal into realtimeMsg gives, and unless
// parseRealtimeEvent accepts exactly what json.Unmarshal accepts (with a
// type) as the same event.
func checkSameAsUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	var m realtimeMsg
	wantErr := json.Unmarshal(data, &m)
	want := eventFromMsg(&m)
	var hand realtimeEvent
	if readRealtimeEvent(data, &hand) {
		if wantErr != nil {
			t.Fatalf("%q: the hand reader takes it; json.Unmarshal gives %v", data, wantErr)
		}
		if !sameEvent(hand, want) {
			t.Fatalf("%q: the hand reader gives %+v, json.Unmarshal %+v", data, hand, want)
		}
	}
	var got realtimeEvent
	err := parseRealtimeEvent(data, &got)
	switch {
	case wantErr != nil || m.Type == "":
		if err == nil {
			t.Fatalf("%q: accepted; json.Unmarshal gives %v, type %q", data, wantErr, m.Type)
		}
	case err != nil:
		t.Fatalf("%q: %v; json.Unmarshal accepts it", data, err)
	case !sameEvent(got, want):
		t.Fatalf("%q: read as %+v, json.Unmarshal gives %+v", data, got, want)
	}
}

// sameEvent compares two events by what they hold: an absent and an empty
// byte string are the same to the client.
func sameEvent(a, b realtimeEvent) bool {
	sameCode := a.code == nil && b.code == nil || a.code != nil && b.code != nil && *a.code == *b.code
	return a.typ == b.typ && a.status == b.status && a.rate == b.rate && a.hasDur == b.hasDur && a.durMS == b.durMS &&
		bytes.Equal(a.responseID, b.responseID) && bytes.Equal(a.delta, b.delta) && bytes.Equal(a.audio, b.audio) &&
		bytes.Equal(a.errorRaw, b.errorRaw) && bytes.Equal(a.event, b.event) && sameCode
}

// readerCases are messages at the hand reader's edges: index i is taken by
// it when takes[i].
var readerCases = []struct {
	msg   string
	takes bool
}{
	{`{"type":"response.output_audio.delta","response_id":"resp_1","item_id":"item_1","output_index":0,"content_index":0,"delta":"` + audioB64Sample + `","sample_rate_hz":24000}`, true},
	{`{"type":"response.audio.delta","delta":"` + audioB64Sample + `"}`, true},
	{`{"audio":"` + audioB64Sample + `","type":"response.audio.delta"}`, true},
	{`{"type": "response.audio.delta", "audio": "AAAA", "sample_rate_hz": 16000, "metadata": {"audio_duration_ms": 105.5, "x": [1, {"y": null}]}}`, true}, // Python's separators
	{`{"type":"response.output_audio_transcript.delta","response_id":"r","delta":"héllo \u00e9"}`, false},                                                 // an escape in a read value
	{`{"type":"response.output_text.delta","delta":"héllo wörld"}`, true},
	{`{"type":"x","note":"a \"quoted\" \\ \/ \b\f\n\r\t \u00e9 word","delta":"AAAA"}`, true}, // escapes in a skipped value
	{`{"type":"x","event":{"delta":"` + audioB64Sample + `"}}`, false},                       // an error path's member
	{`{"type":"x","error":null}`, false},
	{`{"type":"x","Code":"y"}`, false},
	{`{"type":"response.done","response":{"id":"r","status":"completed"}}`, false},
	{`{"type":"x","delta":"` + audioB64Sample + `","Delta":"AAAA"}`, false}, // a later duplicate, by case folding
	{`{"type":"x","delta":"AAAA","delta":"BBBB"}`, false},                   // a duplicate
	{`{"type":"x","\u0064elta":"AAAA"}`, false},                             // an escaped name
	{`{"type":"x","ſample_rate_hz":5}`, false},                              // a name that folds to a field's
	{`{"type":"x","sample_rate_hz":24000.0}`, false},                        // not an int
	{`{"type":"x","sample_rate_hz":1e3}`, false},
	{`{"type":"x","sample_rate_hz":99999999999999999999}`, false},
	{`{"type":"x","sample_rate_hz":-7,"metadata":null,"delta":null,"response_id":null}`, true},
	{`{"type":"x","sample_rate_hz":01}`, false}, // not JSON
	{`{"type":"x","delta":"` + audioB64Sample + `",}`, false},
	{`{"type":"x","text":"\"delta\":\"` + audioB64Sample + `\""}`, true}, // inside a skipped string
	{`{"type":"x","delta":"` + audioB64Sample + `"`, false},              // truncated
	{`{"type":"x"} {}`, false},
	{" \r\n\t{\"type\":\"x\"}\n", true},
	{`{"type":"x","y":"a` + "\x01" + `"}`, false}, // a control character
	{`{"type":"x","y":"\x"}`, false},
	{`{"type":"x","y":"\u12G4"}`, false},
	{`{"type":"x","y":[1,-0,0.5e-3,1E+2,true,false,null,"s",{},[]]}`, true},
	{`{"type":"x","y":[1,]}`, false},
	{`{"type":"x","y":-}`, false},
	{`{"type":"x","y":1.}`, false},
	{`{"type":"x","y":tru}`, false},
	{`{"type":"x","y":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, false}, // deeper than the reader goes
	{`{"type":"x","metadata":{"audio_duration_ms":1e400}}`, false},
	{`{"type":"x","metadata":{"audio_duration_ms":1,"Audio_duration_ms":2}}`, false},
	{`{"type":"x","metadata":{"audio_duration_ms":null,"session_id":"s","epoch":0}}`, true},
	{`{"type":"x","metadata":5}`, false},
	{`{"type":"x","delta":5}`, false},
	{`{"type":null}`, true},
	{`{}`, true},
	{`[]`, false},
	{`null`, false},
	{`{"type":"x","y":"` + "\xff" + `","delta":"` + "\xfe" + `"}`, false}, // not UTF-8 in a read value
	{`{"type":"x","y":"` + "\xff" + `"}`, true},                           // not UTF-8 in a skipped value, which json.Unmarshal takes
}

// TestRealtimeReaderMatchesUnmarshal checks the hand reader on the cases
// above: it takes exactly those marked, and what it gives, as what
// parseRealtimeEvent gives, is json.Unmarshal's event.
func TestRealtimeReaderMatchesUnmarshal(t *testing.T) {
	for i, tc := range readerCases {
		var ev realtimeEvent
		if took := readRealtimeEvent([]byte(tc.msg), &ev); took != tc.takes {
			t.Errorf("case %d %q: taken %v, want %v", i, tc.msg, took, tc.takes)
		}
		checkSameAsUnmarshal(t, []byte(tc.msg))
	}
}

// simulatorEvents are the Realtime events `omnibench serve` sends in one
// turn on each realtime endpoint: the duplex session in the GA and the
// legacy spelling, its native schema (/v1/duplex) and plain realtime.
func simulatorEvents(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, spelling := range []string{simulator.RealtimeEventsGA, simulator.RealtimeEventsLegacy} {
		sim := fastSim(t, func(c *simulator.Config) { c.WS.RealtimeEvents = spelling })
		out = append(out, simulatorTurn(t, sim.URL+RealtimePath+"?duplex=1", "response.done",
			`{"type":"session.update","session":{"modalities":["audio","text"],"turn_detection":null,"playback_commit_policy":"ack_only"}}`,
			`{"type":"conversation.item.create","item":{"id":"item_u0","type":"message","role":"user","content":[{"type":"input_text","text":"Hello there."}]}}`,
			`{"type":"response.create"}`)...)
		if spelling == simulator.RealtimeEventsGA {
			out = append(out, simulatorTurn(t, sim.URL+DuplexPath, "response.done",
				`{"type":"session.create","session":{"modalities":["audio","text"]}}`,
				`{"type":"input.text.append","text":"Hello there."}`, `{"type":"input.commit"}`)...)
			pcm := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0, 16}, InputSampleRate/5))
			out = append(out, simulatorTurn(t, sim.URL+RealtimePath, "response.audio.done",
				`{"type":"session.update","model":"`+simulator.DefaultModel+`"}`,
				`{"type":"input_audio_buffer.commit","final":false}`,
				`{"type":"input_audio_buffer.append","audio":"`+pcm+`"}`,
				`{"type":"input_audio_buffer.commit","final":true}`)...)
		}
	}
	return out
}

// simulatorTurn sends msgs on a new connection to url and returns every
// text message until one of type end.
func simulatorTurn(t testing.TB, url, end string, msgs ...string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(DefaultMaxMessageBytes)
	for _, m := range msgs {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	var out [][]byte
	for range 10_000 {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: after %d events: %v", url, len(out), err)
		}
		out = append(out, data)
		if bytes.Contains(data, []byte(`"type":"`+end+`"`)) {
			return out
		}
	}
	t.Fatalf("%s: no %s in 10000 events", url, end)
	return nil
}

// TestRealtimeReaderTakesSimulatorEvents checks every event the simulator
// sends against json.Unmarshal, and that the hand reader takes the events
// that come with every chunk: audio, transcript and text deltas.
func TestRealtimeReaderTakesSimulatorEvents(t *testing.T) {
	perChunk := 0
	for _, data := range simulatorEvents(t) {
		checkSameAsUnmarshal(t, data)
		var ev realtimeEvent
		taken := readRealtimeEvent(data, &ev)
		var m realtimeMsg
		_ = json.Unmarshal(data, &m)
		switch m.Type {
		case evAudioDelta, evLegacyAudioDelta, evTranscriptDelta, evLegacyTranscriptDelta, evTextDelta, evLegacyTextDelta, evTranscriptionDelta:
			perChunk++
			if !taken {
				t.Errorf("%.200q: left to encoding/json", data)
			}
		}
	}
	if perChunk == 0 {
		t.Fatal("no delta among the simulator's events")
	}
}

// FuzzRealtimeReaderMatchesUnmarshal checks the hand reader against
// json.Unmarshal on arbitrary messages (checkSameAsUnmarshal), seeded with
// the simulator's events, the cases above and the events of the other
// realtime tests.
func FuzzRealtimeReaderMatchesUnmarshal(f *testing.F) {
	for _, data := range simulatorEvents(f) {
		f.Add(data)
	}
	for _, tc := range readerCases {
		f.Add([]byte(tc.msg))
	}
	for _, s := range realtimeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkSameAsUnmarshal(t, data) })
}

// TestRealtimeReaderMutations checks the reader against json.Unmarshal on
// messages near its edges: each seed with a byte replaced by one of JSON's
// structural characters at a pseudo-random place (a fixed sequence, so
// failures repeat).
func TestRealtimeReaderMutations(t *testing.T) {
	seeds := []string{
		`{"type":"response.output_audio.delta","response_id":"r","delta":"` + audioB64Sample[:400] + `","sample_rate_hz":24000}`,
		`{"audio":"` + audioB64Sample[:400] + `","type":"response.audio.delta","metadata":{"audio_duration_ms":12.5},"event":{"delta":"AAAA"}}`,
		`{"content_index":0,"delta":"` + audioB64Sample[:400] + `","format":"pcm16","metadata":{"epoch":0,"session_id":"s"},"type":"response.audio.delta"}`,
	}
	const swaps = `"\:,{}[] u0Da-.eE`
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

// TestRealtimeEventAllocations checks that a turn's per-chunk events, an
// audio delta and its transcript delta as the simulator sends them (the
// payload before the type, the keys sorted), cost no allocation once the
// turn is under way: the hand reader reads them in place and the audio is
// decoded into the session's buffer. Read by encoding/json, each pair
// allocated the event, its strings, the payload's copy and the decoded
// samples.
func TestRealtimeEventAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	c := newClient(t, "http://127.0.0.1:1", Options{})
	for _, spelling := range []string{"output_audio", "audio"} {
		audio := []byte(`{"content_index":0,"delta":"` + audioB64Sample + `","format":"pcm16","item_id":"item_resp-1","metadata":{"epoch":0,"session_id":"rt-1"},"output_index":0,"response_id":"resp-1","type":"response.` + spelling + `.delta"}`)
		transcript := []byte(`{"content_index":0,"delta":"","item_id":"item_resp-1","output_index":0,"response_id":"resp-1","type":"response.` + spelling + `_transcript.delta"}`)
		rec := &results.Record{WS: &results.WSTurn{}}
		rt := &realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate}, rec: rec, t0: time.Now()}
		event := func() {
			for _, data := range [][]byte{audio, transcript} {
				rt.events++
				if _, f := rt.event(message{typ: websocket.MessageText, data: data, at: time.Now()}); f != nil {
					t.Fatal(f)
				}
			}
		}
		event() // the first: the response id, the onset detector (AllocsPerRun runs it once more before counting)
		// The record's chunk slices grow by doubling: a few allocations in
		// a thousand pairs, 0 per pair on average.
		if n := testing.AllocsPerRun(1000, event); n != 0 {
			t.Errorf("%s: %v allocations per audio and transcript delta", spelling, n)
		}
		if rec.AudioBytes != 1002*3840 || rec.WS.Events == "" {
			t.Errorf("%s: %d audio bytes, events %q", spelling, rec.AudioBytes, rec.WS.Events)
		}
	}
}

// TestRealtimeReaderNamesByEncodingJSONRules checks that the hand reader
// decides whether a member name selects a field by encoding/json's own
// rules (jsonscan's Object.KeyIs): a member whose name is not ASCII or
// has an escape is skipped when it selects no field, and the message
// stays with the hand reader; one that folds to a field's name is left to
// encoding/json.
func TestRealtimeReaderNamesByEncodingJSONRules(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		takes bool
	}{
		{`{"type":"x","délta":"AAAA","delta":"BBBB"}`, true},
		{`{"type":"x","\u0078":[1],"delta":"BBBB"}`, true},
		{`{"type":"x","metadata":{"dürée":1,"audio_duration_ms":2}}`, true},
		{`{"type":"x","\u0044elta":"AAAA"}`, false}, // "Delta": folds to delta
		{`{"type":"x","metadata":{"audio_duration_mſ":1}}`, false},
	} {
		var ev realtimeEvent
		if got := readRealtimeEvent([]byte(tc.msg), &ev); got != tc.takes {
			t.Errorf("%s: taken %v, want %v", tc.msg, got, tc.takes)
		}
		checkSameAsUnmarshal(t, []byte(tc.msg))
	}
}
