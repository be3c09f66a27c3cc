package wsclient

import (
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
)

// FuzzSpeechMessage feeds arbitrary server text messages to the speech-ws
// parser and to the utterance's handler: neither may panic, an accepted
// message has the fields its type requires, and the record stays
// consistent (chunk slices in step, bytes summed).
func FuzzSpeechMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"Hello","format":"pcm","sample_rate":24000}`,
		`{"type":"audio.chunk","utterance_index":0,"sentence_index":0,"chunk_id":0,"chunk_start_ms":0,"chunk_end_ms":320,"sample_rate":24000,"audio_b64":"AAAAAA==","timestamps":null}`,
		`{"type":"audio.chunk","chunk_id":3,"sample_rate":24000,"audio_b64":"","timestamps":[{"word":"Hello","start_ms":80,"end_ms":420}]}`,
		`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":94080,"error":false}`,
		`{"type":"session.done","utterance_index":1,"total_sentences":0}`,
		`{"type":"error","message":"Idle timeout: no message received"}`,
		`{"type":"audio.chunk","sample_rate":-1,"audio_b64":"!!"}`,
		`{"type":"audio.done","total_bytes":-5,"error":true}`,
		`[]`, `null`, `{"type":5}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	c := newClient(f, "http://127.0.0.1:1", Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseSpeechMsg(data)
		if err == nil {
			switch m.Type {
			case "audio.start", "session.done":
				if m.UtteranceIndex == nil {
					t.Fatalf("%s accepted without utterance_index", m.Type)
				}
			case "audio.chunk":
				if m.AudioB64 == nil || m.SampleRate == nil || *m.SampleRate <= 0 {
					t.Fatal("audio.chunk accepted without audio_b64 or a positive sample_rate")
				}
			case "audio.done":
				if m.TotalBytes == nil || *m.TotalBytes < 0 || m.Error == nil {
					t.Fatal("audio.done accepted without total_bytes or error")
				}
			}
		}
		for _, mode := range SpeechModes() {
			rec := &results.Record{WS: &results.WSTurn{}}
			st := &speechTurn{c: c, sess: Session{SpeechAudio: mode}, rec: rec, t0: time.Now(), started: true}
			_, _ = st.message(message{typ: websocket.MessageText, data: data, at: time.Now()})
			_ = st.binary(data, 0)
			checkTimeline(t, rec)
		}
	})
}

// realtimeSeeds are Realtime server events of every endpoint and spelling,
// and broken ones.
var realtimeSeeds = []string{
	`{"type":"session.created","session":{"id":"seed-tts-0"},"event_id":"event_1"}`,
	`{"type":"response.created","response_id":"resp-1","response":{"id":"resp-1","status":"in_progress"}}`,
	`{"type":"response.audio.delta","response_id":"resp-1","delta":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQAAAAA=","format":"pcm16"}`,
	`{"type":"response.audio.delta","audio":"AAAA","sample_rate_hz":16000,"metadata":{"audio_duration_ms":105}}`,
	`{"type":"response.output_text.delta","response_id":"resp-1","delta":"The quick"}`,
	`{"type":"response.done","response":{"id":"resp-1","status":"completed"}}`,
	`{"type":"error","error":{"type":"invalid_request_error","code":"x","message":"y"}}`,
	`{"type":"error","error":"flat","code":"model_not_validated"}`,
	`{"type":"duplex.response.message","event":{"error":{"message":"chat failed"}}}`,
	`{"type":"response.audio.delta","delta":"UklGRgAAAABXQVZF"}`,
	`{"type":""}`, `7`, `{"type":"response.done","response":null}`,
	// The GA spelling of current servers.
	`{"type":"response.output_audio.delta","response_id":"resp-1","item_id":"item_resp-1","output_index":0,"content_index":0,"delta":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQAAAAA=","format":"pcm16"}`,
	`{"type":"response.output_audio.delta","delta":"AAAA","sample_rate_hz":24000,"metadata":{"audio_duration_ms":42}}`,
	`{"type":"response.output_audio_transcript.delta","response_id":"resp-1","delta":"The quick"}`,
	`{"type":"response.output_audio.done","response_id":"resp-1","item_id":"item_resp-1","output_index":0,"content_index":0}`,
	`{"type":"response.output_audio_transcript.done","response_id":"resp-1","transcript":"The quick"}`,
	`{"type":"response.done","response_id":"resp-1","response":{"id":"resp-1","object":"realtime.response","status":"completed","output":[{"id":"item_resp-1","type":"message","role":"assistant","status":"completed"}],"metadata":{"type":"response.done","epoch":0}}}`,
	`{"type":"response.output_audio.delta","delta":"!!"}`,
	// The native schema of /v1/duplex.
	`{"type":"input.committed","session_id":"tts-1","turn_id":0,"epoch":0,"history_len":1,"message":{"role":"user","content":"Hello there."},"server_event_seq":1}`,
	`{"type":"response.created","session_id":"tts-1","response_id":"resp-tts-1-0-3fa2c1d9","epoch":0,"modalities":["audio","text"],"request_id":"chatcmpl-duplex-tts-1-0-1","server_event_seq":2}`,
	`{"type":"response.text.delta","session_id":"tts-1","response_id":"resp-tts-1-0-3fa2c1d9","epoch":0,"delta":"Hello there.","server_event_seq":3}`,
	`{"type":"response.output_audio.delta","session_id":"tts-1","response_id":"resp-tts-1-0-3fa2c1d9","epoch":0,"audio":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQAAAAA=","format":"wav","server_event_seq":4}`,
	`{"type":"response.done","session_id":"tts-1","response_id":"resp-tts-1-0-3fa2c1d9","epoch":0,"committed":true,"playback":{"generated_ms":0},"server_event_seq":5}`,
}

// FuzzRealtimeEvent does the same for Realtime server events.
func FuzzRealtimeEvent(f *testing.F) {
	for _, s := range realtimeSeeds {
		f.Add([]byte(s))
	}
	c := newClient(f, "http://127.0.0.1:1", Options{APIKey: "sk-fuzz-key"})
	red := c.redactor(Session{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev realtimeEvent
		if err := parseRealtimeEvent(data, &ev); err == nil {
			if ev.typ == "" {
				t.Fatal("an event without a type was accepted")
			}
			_ = ev.audioB64()
			_ = errorText(red, ev.errorRaw, ev.code)
			_ = forwardedError(red, ev.event)
		}
		for _, native := range []bool{false, true} {
			rec := &results.Record{WS: &results.WSTurn{}}
			rt := &realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate, native: native}, rec: rec, t0: time.Now()}
			for range 2 {
				_, _ = rt.event(message{typ: websocket.MessageText, data: data, at: time.Now()})
			}
			checkTimeline(t, rec)
			if rt.benchBytes < 0 {
				t.Fatalf("bench bytes %d", rt.benchBytes)
			}
			if e := rec.WS.Events; e != "" && (native || e != results.EventsGA && e != results.EventsLegacy) {
				t.Fatalf("events spelling %q (native %v)", e, native)
			}
		}
	})
}

func checkTimeline(t *testing.T, rec *results.Record) {
	t.Helper()
	if len(rec.ChunkArrivalsS) != len(rec.ChunkBytes) {
		t.Fatalf("%d arrivals, %d sizes", len(rec.ChunkArrivalsS), len(rec.ChunkBytes))
	}
	var sum int64
	for _, n := range rec.ChunkBytes {
		if n <= 0 {
			t.Fatalf("chunk of %d bytes", n)
		}
		sum += int64(n)
	}
	if sum != rec.AudioBytes {
		t.Fatalf("chunks sum to %d, audio bytes %d", sum, rec.AudioBytes)
	}
}
