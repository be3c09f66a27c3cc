package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
)

// chunk80ms is 80 ms of 24 kHz s16le mono: 1920 frames.
const chunk80ms = 3840

const testAPIKey = "sk-test-0123456789abcdef"

// server is an httptest server on 127.0.0.1 whose handler is given per
// test; it records the decoded JSON body and headers of each request and
// counts the connections it accepted.
type server struct {
	*httptest.Server
	bodies  chan map[string]any
	headers chan http.Header
	conns   atomic.Int32
	stop    chan struct{} // closed at cleanup: releases stalled handlers
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, s *server)) *server {
	t.Helper()
	s := &server{bodies: make(chan map[string]any, 16), headers: make(chan http.Header, 16), stop: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("server: request body: %v", err)
		}
		select {
		case s.bodies <- body:
		default:
		}
		select {
		case s.headers <- r.Header.Clone():
		default:
		}
		h(w, r, s)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(func() {
		close(s.stop)
		s.Close()
	})
	return s
}

// lastBody returns the body of the most recent request.
func (s *server) lastBody(t *testing.T) map[string]any {
	t.Helper()
	var b map[string]any
	for {
		select {
		case b = <-s.bodies:
		default:
			if b == nil {
				t.Fatal("server saw no request")
			}
			return b
		}
	}
}

// sseStart writes the event-stream headers.
func sseStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// event writes one "data:" event (with an optional "event:" line) and
// flushes it.
func event(w http.ResponseWriter, typ, data string) {
	if typ != "" {
		fmt.Fprintf(w, "event: %s\n", typ)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func textEvent(content string) string {
	c, _ := json.Marshal(content)
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"m","choices":[{"index":0,"delta":{"content":` + string(c) + `},"logprobs":null,"finish_reason":null}],"modality":"text","metrics":null}`
}

func audioEvent(b []byte, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"` +
		base64.StdEncoding.EncodeToString(b) + `"},"logprobs":null,"finish_reason":` + fr +
		`}],"usage":{"prompt_tokens":42,"completion_tokens":0,"total_tokens":42},"modality":"audio","metrics":null}`
}

const usageEvent = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"m","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":57,"total_tokens":99}}`

// transportEnv names the HTTP transport the tests' clients use when set
// (own or std): CI runs the suite once on each. Only the tests read it.
const transportEnv = "OMNIBENCH_HTTP_TRANSPORT"

func newClient(t *testing.T, url string, opts Options) *Client {
	t.Helper()
	opts.BaseURL = url
	if opts.HTTPTransport == "" {
		opts.HTTPTransport = os.Getenv(transportEnv)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c *Client, req Request) *results.Record {
	t.Helper()
	rec := &results.Record{}
	c.Do(context.Background(), req, rec)
	return rec
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// checkTimeline checks the invariants every record with audio satisfies.
func checkTimeline(t *testing.T, rec *results.Record) {
	t.Helper()
	if len(rec.ChunkArrivalsS) != len(rec.ChunkBytes) {
		t.Fatalf("%d arrivals but %d byte counts", len(rec.ChunkArrivalsS), len(rec.ChunkBytes))
	}
	var sum int64
	for i, n := range rec.ChunkBytes {
		if n <= 0 {
			t.Errorf("chunk %d has %d bytes; only non-empty chunks are recorded", i, n)
		}
		sum += int64(n)
		if i > 0 && rec.ChunkArrivalsS[i] < rec.ChunkArrivalsS[i-1] {
			t.Errorf("arrivals decrease at chunk %d", i)
		}
	}
	if sum != rec.AudioBytes {
		t.Errorf("chunk bytes sum to %d, AudioBytes is %d", sum, rec.AudioBytes)
	}
	if len(rec.ChunkArrivalsS) > 0 {
		if rec.TTFPS != rec.ChunkArrivalsS[0] || rec.LastAudioS != rec.ChunkArrivalsS[len(rec.ChunkArrivalsS)-1] {
			t.Errorf("TTFP %v / last audio %v do not match the first/last arrival", rec.TTFPS, rec.LastAudioS)
		}
		if !(rec.FirstByteS > 0 && rec.FirstByteS <= rec.TTFPS && rec.LastAudioS <= rec.E2ES) {
			t.Errorf("time order broken: first byte %v, TTFP %v, last audio %v, e2e %v", rec.FirstByteS, rec.TTFPS, rec.LastAudioS, rec.E2ES)
		}
	}
}

func TestChatWAVStream(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", exRoleChunk) // role chunk with empty content: not text
		event(w, "", textEvent("Hello"))
		event(w, "", textEvent(", wörld"))
		event(w, "", audioEvent(testWAV(24000, nil, false), "")) // header-only WAV: no chunk
		for i := range 5 {
			fin := ""
			if i == 4 {
				fin = "stop"
			}
			event(w, "", audioEvent(testWAV(24000, testPCM(chunk80ms), false), fin))
		}
		event(w, "", usageEvent)
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{APIKey: testAPIKey, Thresholds: []float64{0.1, 0.5}})
	rec := do(t, c, Request{
		Kind: results.KindChat, Model: "Qwen/Qwen3-Omni", Voice: "Chelsie", Prompt: "Say hi",
		Modalities: []string{"text", "audio"},
		Headers:    map[string]string{"X-Trace": "abc"},
		ExtraBody:  map[string]any{"temperature": 0.5, "stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": false}},
	})
	if !rec.OK() {
		t.Fatalf("request failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	checkTimeline(t, rec)
	if rec.Kind != results.KindChat || rec.Endpoint != "/v1/chat/completions" || rec.Model != "Qwen/Qwen3-Omni" || rec.Status != 200 {
		t.Errorf("identity: kind %q endpoint %q model %q status %d", rec.Kind, rec.Endpoint, rec.Model, rec.Status)
	}
	// 5 chunks of 3840 bytes = 19200 bytes = 9600 frames = 0.4 s at 24 kHz.
	if len(rec.ChunkBytes) != 5 || rec.AudioBytes != 19200 || rec.AudioFrames != 9600 || !near(rec.AudioDurationS, 0.4) {
		t.Errorf("audio: %d chunks, %d bytes, %d frames, %v s; want 5, 19200, 9600, 0.4", len(rec.ChunkBytes), rec.AudioBytes, rec.AudioFrames, rec.AudioDurationS)
	}
	if rec.SampleRate != 24000 || rec.SampleWidth != 2 || rec.Channels != 1 {
		t.Errorf("format %d Hz, %d bytes, %d ch", rec.SampleRate, rec.SampleWidth, rec.Channels)
	}
	if rec.TextChars != len([]rune("Hello, wörld")) || len(rec.TextGapsS) != 1 || rec.TTFTS <= 0 || rec.TTFTS > rec.TTFPS {
		t.Errorf("text: %d chars, gaps %v, TTFT %v (TTFP %v)", rec.TextChars, rec.TextGapsS, rec.TTFTS, rec.TTFPS)
	}
	if rec.PromptTokens != 42 || rec.CompletionTokens != 57 || rec.FinishReason != "stop" {
		t.Errorf("usage %d/%d finish %q", rec.PromptTokens, rec.CompletionTokens, rec.FinishReason)
	}
	if !near(rec.RTFLastChunk, rec.LastAudioS/0.4) || !near(rec.RTFE2E, rec.E2ES/0.4) || rec.RTFServer != nil {
		t.Errorf("RTF last %v e2e %v server %v", rec.RTFLastChunk, rec.RTFE2E, rec.RTFServer)
	}
	if rec.ConnectS <= 0 || rec.ConnectS > rec.FirstByteS {
		t.Errorf("connect %v, first byte %v", rec.ConnectS, rec.FirstByteS)
	}
	cont := rec.Continuity
	if cont == nil || cont.Mode != "default" || len(cont.OK) != 2 || cont.Preroll == nil || cont.StallResume == nil {
		t.Fatalf("continuity %+v", cont)
	}
	want := continuity.Simulate(continuity.Input{ArrivalsS: rec.ChunkArrivalsS, Bytes: rec.ChunkBytes, SampleRate: 24000}, continuity.Default)
	if cont.MaxUnderrunS != want.MaxUnderrunS || cont.OK["100"] != want.Continuous(0.1) || cont.OK["500"] != want.Continuous(0.5) {
		t.Errorf("continuity %+v, simulator says %+v", cont, want)
	}

	body := srv.lastBody(t)
	msgs, _ := body["messages"].([]any)
	if body["model"] != "Qwen/Qwen3-Omni" || body["voice"] != "Chelsie" || body["stream"] != true || len(msgs) != 1 || body["temperature"] != 0.5 {
		t.Errorf("request body %v", body)
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true || so["continuous_usage_stats"] != false {
		t.Errorf("stream_options %v", body["stream_options"])
	}
	if a, _ := body["audio"].(map[string]any); a["format"] != "wav" {
		t.Errorf("audio %v", body["audio"])
	}
	if m, _ := body["modalities"].([]any); len(m) != 2 {
		t.Errorf("modalities %v", body["modalities"])
	}
	h := <-srv.headers
	if h.Get("Authorization") != "Bearer "+testAPIKey || h.Get("X-Trace") != "abc" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers: auth ok %v, X-Trace %q, content type %q", h.Get("Authorization") == "Bearer "+testAPIKey, h.Get("X-Trace"), h.Get("Content-Type"))
	}
}

// TestBaseURLUserInfoIsBasicAuth: a base URL with a user and password
// sends them as Basic authorization, as net/http's client does, unless an
// API key sets the Authorization itself; neither reaches the record.
func TestBaseURLUserInfoIsBasicAuth(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", textEvent("hi"))
		event(w, "", "[DONE]")
	})
	withUser := strings.Replace(srv.URL, "http://", "http://alice:hunter2@", 1)
	req := Request{Kind: results.KindChat, Model: "m", Prompt: "p", Modalities: []string{"text"}}
	for _, tc := range []struct {
		name, apiKey, want string
	}{
		{"user and password", "", "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:hunter2"))},
		{"the API key wins", testAPIKey, "Bearer " + testAPIKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, newClient(t, withUser, Options{APIKey: tc.apiKey}), req)
			if !rec.OK() {
				t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
			}
			if got := (<-srv.headers).Get("Authorization"); got != tc.want {
				t.Errorf("Authorization %q, want %q", got, tc.want)
			}
		})
	}
}

// TestConnectErrorHidesBaseURLUser: a connect failure names the URL, and
// neither the user nor the password of the base URL survives in the record.
func TestConnectErrorHidesBaseURLUser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, "http://alice:hunter2@"+addr, Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Model: "m", Prompt: "p", Modalities: []string{"text"}})
	if rec.ErrorClass != results.ErrConnect {
		t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, results.ErrConnect)
	}
	if !strings.Contains(rec.Error, addr+"/v1/chat/completions") {
		t.Errorf("error %q does not name the URL", rec.Error)
	}
	for _, secret := range []string{"alice", "hunter2"} {
		if strings.Contains(rec.Error, secret) {
			t.Errorf("error %q shows %q", rec.Error, secret)
		}
	}
}

func TestChatPCMAndDeltaAudioData(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		// Raw PCM in delta.content, then OpenAI-style delta.audio.data
		// without a modality field, then one with escaped slashes.
		event(w, "", audioEvent(testPCM(3200), ""))
		b64 := base64.StdEncoding.EncodeToString(testPCM(1600))
		event(w, "", `{"choices":[{"index":0,"delta":{"audio":{"id":"a","data":"`+b64+`"}},"finish_reason":null}]}`)
		event(w, "", `{"choices":[{"index":0,"delta":{"content":"`+strings.ReplaceAll(b64, "/", `\/`)+`"},"finish_reason":"stop"}],"modality":"audio"}`)
		event(w, "", usageEvent)
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL+"/v1/", Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm16", PCMSampleRate: 16000})
	if !rec.OK() {
		t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
	}
	checkTimeline(t, rec)
	// 6400 bytes = 3200 frames = 0.2 s at 16 kHz.
	if got := rec.ChunkBytes; len(got) != 3 || got[0] != 3200 || got[1] != 1600 || got[2] != 1600 {
		t.Errorf("chunk bytes %v", got)
	}
	if rec.SampleRate != 16000 || rec.AudioFrames != 3200 || !near(rec.AudioDurationS, 0.2) || rec.TextChars != 0 {
		t.Errorf("rate %d frames %d duration %v text %d", rec.SampleRate, rec.AudioFrames, rec.AudioDurationS, rec.TextChars)
	}
	if a, _ := srv.lastBody(t)["audio"].(map[string]any); a["format"] != "pcm" {
		t.Errorf("audio %v", a)
	}
}

func TestChatWAVRateComesFromHeader(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		for range 3 {
			event(w, "", audioEvent(testWAV(48000, testPCM(9600), false), ""))
		}
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", PCMSampleRate: 16000})
	if !rec.OK() || rec.SampleRate != 48000 || !near(rec.AudioDurationS, 0.3) {
		t.Errorf("rate %d duration %v (%s %s)", rec.SampleRate, rec.AudioDurationS, rec.ErrorClass, rec.Error)
	}
}

func TestSpeechRawStream(t *testing.T) {
	for _, tc := range []struct {
		format string
		rate   int
		header []byte
	}{
		{"pcm", 24000, nil},
		{"wav", 22050, testWAV(22050, nil, true)},
	} {
		t.Run(tc.format, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				w.Header().Set("Content-Type", "audio/"+tc.format)
				f := w.(http.Flusher)
				if tc.header != nil {
					// Split the header across writes: the client must
					// gather it.
					w.Write(tc.header[:10])
					f.Flush()
					w.Write(tc.header[10:])
					w.Write(testPCM(100))
					f.Flush()
				}
				for range 4 {
					w.Write(testPCM(chunk80ms))
					f.Flush()
				}
			})
			c := newClient(t, srv.URL, Options{})
			rec := do(t, c, Request{Kind: results.KindSpeech, Prompt: "hi", AudioFormat: tc.format, Voice: "v"})
			if !rec.OK() {
				t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
			}
			checkTimeline(t, rec)
			want := int64(4 * chunk80ms)
			if tc.header != nil {
				want += 100
			}
			if rec.AudioBytes != want || rec.SampleRate != tc.rate || rec.Endpoint != "/v1/audio/speech" {
				t.Errorf("bytes %d (want %d), rate %d, endpoint %q", rec.AudioBytes, want, rec.SampleRate, rec.Endpoint)
			}
			if !near(rec.AudioDurationS, float64(want/2)/float64(tc.rate)) {
				t.Errorf("duration %v", rec.AudioDurationS)
			}
			body := srv.lastBody(t)
			if body["stream_format"] != "audio" || body["response_format"] != tc.format || body["input"] != "hi" || body["voice"] != "v" || body["stream"] != nil {
				t.Errorf("body %v", body)
			}
		})
	}
}

func TestSpeechSSE(t *testing.T) {
	for _, tc := range []struct {
		format    string
		rate      int
		header    []byte
		eventLine bool
	}{
		{"pcm", 24000, nil, true},
		{"wav", 16000, testWAV(16000, nil, true), true},
		{"wav", 16000, testWAV(16000, nil, true), false}, // type only in the JSON
	} {
		t.Run(fmt.Sprintf("%s/event-line=%v", tc.format, tc.eventLine), func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				typ := func(s string) string {
					if tc.eventLine {
						return s
					}
					return ""
				}
				if tc.header != nil {
					event(w, typ(speechDelta), `{"type":"speech.audio.delta","audio":"`+base64.StdEncoding.EncodeToString(tc.header)+`","response_format":"wav"}`)
				}
				for range 3 {
					event(w, typ(speechDelta), `{"type":"speech.audio.delta","audio":"`+base64.StdEncoding.EncodeToString(testPCM(chunk80ms))+`","response_format":"`+tc.format+`"}`)
				}
				event(w, typ(speechDone), `{"type":"speech.audio.done","usage":{"input_tokens":12,"output_tokens":150,"total_tokens":162}}`)
			})
			c := newClient(t, srv.URL, Options{})
			rec := do(t, c, Request{Kind: results.KindSpeechSSE, Prompt: "hi", AudioFormat: tc.format})
			if !rec.OK() {
				t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
			}
			checkTimeline(t, rec)
			if len(rec.ChunkBytes) != 3 || rec.AudioBytes != 3*chunk80ms || rec.SampleRate != tc.rate {
				t.Errorf("chunks %v, rate %d", rec.ChunkBytes, rec.SampleRate)
			}
			if rec.PromptTokens != 12 || rec.CompletionTokens != 150 {
				t.Errorf("tokens %d/%d", rec.PromptTokens, rec.CompletionTokens)
			}
			body := srv.lastBody(t)
			if body["stream"] != true || body["stream_format"] != "sse" || body["response_format"] != tc.format {
				t.Errorf("body %v", body)
			}
		})
	}
}

// TestFailures covers every error class that a server can cause.
func TestFailures(t *testing.T) {
	wavChunk := audioEvent(testWAV(24000, testPCM(chunk80ms), false), "")
	cases := []struct {
		name    string
		kind    string
		format  string
		opts    Options
		handler func(w http.ResponseWriter, r *http.Request, s *server)
		class   string
		status  int
		chunks  int // audio chunks kept; -1: don't check
		msg     string
	}{
		{
			name: "http 500 before the stream", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(500)
				io.WriteString(w, `{"object":"error","message":"Engine crashed","type":"InternalServerError","code":500}`)
			},
			class: results.ErrHTTPStatus, status: 500, msg: "HTTP 500: Engine crashed",
		},
		{
			name: "http 400 with OpenAI error and long message", kind: results.KindSpeech,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"Invalid audio format 'ogg'`+strings.Repeat("x", 500)+`","type":"BadRequestError"}}`)
			},
			class: results.ErrHTTPStatus, status: 400, msg: "HTTP 400: Invalid audio format 'ogg'xxx",
		},
		{
			name: "JSON document instead of a stream", kind: results.KindSpeech, format: "pcm",
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"error":{"message":"streaming not supported for this model"}}`)
			},
			class: results.ErrMalformed, status: 200, msg: `instead of a stream: streaming not supported for this model`,
		},
		{
			name: "chat error event", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				event(w, "", exErrorChunk)
				event(w, "", "[DONE]")
			},
			class: results.ErrStreamError, status: 200, chunks: 1, msg: "event 2: server error: CUDA out of memory",
		},
		{
			name: "speech error event", kind: results.KindSpeechSSE,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, speechError, `{"type":"speech.audio.error","error":{"message":"boom","type":"server_error","code":500}}`)
			},
			class: results.ErrStreamError, status: 200, msg: "event 1: server error: boom",
		},
		{
			name: "disconnect mid-stream", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				event(w, "", wavChunk)
				panic(http.ErrAbortHandler)
			},
			class: results.ErrTruncated, status: 200, chunks: 2, msg: "unexpected EOF",
		},
		{
			name: "clean end without DONE", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
			},
			class: results.ErrTruncated, status: 200, chunks: 1, msg: "stream ended after 1 events without [DONE]",
		},
		{
			name: "speech SSE without done", kind: results.KindSpeechSSE, format: "pcm",
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, speechDelta, `{"type":"speech.audio.delta","audio":"AAAA"}`)
			},
			class: results.ErrTruncated, status: 200, chunks: 1, msg: "without speech.audio.done",
		},
		{
			name: "event cut off by a clean end", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				io.WriteString(w, "data: "+wavChunk[:100])
			},
			class: results.ErrTruncated, status: 200, chunks: 1, msg: "stream ended inside event 2",
		},
		{
			name: "raw stream disconnect", kind: results.KindSpeech, format: "pcm",
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				w.Write(testPCM(1000))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			},
			class: results.ErrTruncated, status: 200, chunks: -1, msg: "unexpected EOF",
		},
		{
			name: "malformed JSON", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				event(w, "", `{"choices":[{"delta":{"content":"abc"}}}`)
				event(w, "", "[DONE]")
			},
			class: results.ErrMalformed, status: 200, chunks: 1, msg: "event 2: invalid JSON at byte 39: expected ',' or ']'",
		},
		{
			name: "malformed base64", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", `{"choices":[{"delta":{"content":"UklG*kYA"}}],"modality":"audio"}`)
				event(w, "", "[DONE]")
			},
			class: results.ErrMalformed, status: 200, msg: "event 1: choices[0].delta.content: bad base64: illegal base64 data at input byte 4",
		},
		{
			name: "malformed WAV", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", audioEvent(testPCM(64), "")) // raw PCM although wav was asked for
				event(w, "", "[DONE]")
			},
			class: results.ErrMalformed, status: 200, msg: "event 1: choices[0].delta.content: bad WAV",
		},
		{
			name: "raw wav stream without header", kind: results.KindSpeech, format: "wav",
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				w.Write(testPCM(4000))
			},
			class: results.ErrMalformed, status: 200, msg: "must start with a RIFF header",
		},
		{
			name: "format change mid-stream", kind: results.KindChat,
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				event(w, "", audioEvent(testWAV(16000, testPCM(100), false), ""))
				event(w, "", "[DONE]")
			},
			class: results.ErrMalformed, status: 200, chunks: 1, msg: "event 2: audio format changed from 24000 Hz",
		},
		{
			// The handler holds the stream until the client leaves, so the
			// idle timeout only has to outlast the gap a loaded machine
			// may put between the head and the first event.
			name: "stall", kind: results.KindChat, opts: Options{IdleTimeout: 3 * time.Second},
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				event(w, "", wavChunk)
				select {
				case <-r.Context().Done():
				case <-s.stop:
				}
			},
			class: results.ErrIdleTimeout, status: 200, chunks: 1, msg: "idle timeout, after 1 events",
		},
		{
			name: "stall before headers", kind: results.KindSpeech, opts: Options{IdleTimeout: 100 * time.Millisecond},
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				select {
				case <-r.Context().Done():
				case <-s.stop:
				}
			},
			class: results.ErrIdleTimeout, msg: "idle timeout",
		},
		{
			name: "slow", kind: results.KindChat, opts: Options{Timeout: time.Second},
			handler: func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for range 100000 { // bounded; the client gives up long before
					event(w, "", wavChunk)
					select {
					case <-tick.C:
					case <-r.Context().Done():
						return
					case <-s.stop:
						return
					}
				}
			},
			class: results.ErrTimeout, status: 200, chunks: -1, msg: "deadline passed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.handler)
			c := newClient(t, srv.URL, tc.opts)
			rec := do(t, c, Request{Kind: tc.kind, Prompt: "x", AudioFormat: tc.format})
			if rec.ErrorClass != tc.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tc.class)
			}
			if !strings.Contains(rec.Error, tc.msg) {
				t.Errorf("error %q does not contain %q", rec.Error, tc.msg)
			}
			if rec.Status != tc.status {
				t.Errorf("status %d, want %d", rec.Status, tc.status)
			}
			if len(rec.Error) > 400 {
				t.Errorf("error message is %d bytes long", len(rec.Error))
			}
			if tc.chunks >= 0 && len(rec.ChunkBytes) != tc.chunks {
				t.Errorf("%d chunks kept, want %d", len(rec.ChunkBytes), tc.chunks)
			}
			if tc.chunks == -1 && len(rec.ChunkBytes) == 0 {
				t.Errorf("partial chunks were not kept")
			}
			checkTimeline(t, rec)
			if rec.E2ES <= 0 {
				t.Errorf("e2e %v", rec.E2ES)
			}
		})
	}
}

func TestConnectFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, "http://"+addr, Options{APIKey: testAPIKey})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	if rec.ErrorClass != results.ErrConnect || rec.Status != 0 || strings.Contains(rec.Error, testAPIKey) {
		t.Errorf("class %q status %d error %q", rec.ErrorClass, rec.Status, rec.Error)
	}
}

func TestInvalidRequestIsRecorded(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1", Options{})
	for _, req := range []Request{
		{Kind: "tts"},
		{Kind: results.KindChat, AudioFormat: "aac"},
		{Kind: results.KindSpeech, AudioFormat: "opus"},
		{Kind: results.KindSpeech, ExtraBody: map[string]any{"response_format": "flac"}},
		{Kind: results.KindSpeech, ExtraBody: map[string]any{"bad": make(chan int)}},
		{Kind: results.KindSpeechSSE, PCMSampleRate: -1},
	} {
		if req.Validate() == nil {
			t.Errorf("%+v: Validate accepted it", req)
		}
		rec := do(t, c, req)
		if rec.ErrorClass != results.ErrConnect || !strings.HasPrefix(rec.Error, "request not sent") {
			t.Errorf("%+v: class %q error %q", req, rec.ErrorClass, rec.Error)
		}
	}
}

func TestValidateAcceptsEveryKind(t *testing.T) {
	for _, req := range []Request{
		{Kind: results.KindChat},
		{Kind: results.KindSpeech, AudioFormat: "PCM"},
		{Kind: results.KindSpeechSSE, AudioFormat: "wav", ExtraBody: map[string]any{"audio": map[string]any{"voice": "x"}}},
		{Kind: results.KindChat, ExtraBody: map[string]any{"audio": map[string]any{"format": "pcm16"}}},
	} {
		if err := req.Validate(); err != nil {
			t.Errorf("%+v: %v", req, err)
		}
	}
}

func TestCancelled(t *testing.T) {
	started := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", audioEvent(testWAV(24000, testPCM(chunk80ms), false), ""))
		close(started)
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
	})
	c := newClient(t, srv.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *results.Record)
	go func() {
		rec := &results.Record{}
		c.Do(ctx, Request{Kind: results.KindChat, Prompt: "x"}, rec)
		done <- rec
	}()
	<-started
	cancel()
	rec := <-done
	// The cancel may reach the client before or after it read the response
	// headers; either way the request was in flight.
	if rec.ErrorClass != results.ErrCancelled {
		t.Errorf("class %q (%s) status %d", rec.ErrorClass, rec.Error, rec.Status)
	}
}

func TestAPIKeyNeverInRecord(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		auth := r.Header.Get("Authorization")
		if r.URL.Query().Get("x") == "" && strings.Contains(r.Header.Get("X-Mode"), "status") {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"invalid key `+auth+`"}}`)
			return
		}
		sseStart(w)
		event(w, "", `{"error":{"message":"rejected `+strings.TrimPrefix(auth, "Bearer ")+` token; also `+r.Header.Get("X-Api-Key")+`"}}`)
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{APIKey: testAPIKey})
	for _, mode := range []string{"status", "stream"} {
		rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", Headers: map[string]string{"X-Mode": mode, "X-Api-Key": "other-secret-value"}})
		if rec.ErrorClass == "" || strings.Contains(rec.Error, testAPIKey) || strings.Contains(rec.Error, "other-secret-value") || !strings.Contains(rec.Error, "[redacted]") {
			t.Errorf("%s: class %q error %q", mode, rec.ErrorClass, rec.Error)
		}
		b, _ := json.Marshal(rec)
		if strings.Contains(string(b), testAPIKey) {
			t.Errorf("%s: the API key is in the record JSON", mode)
		}
	}
}

func TestConnectionReuse(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", audioEvent(testWAV(24000, testPCM(chunk80ms), false), "stop"))
		if r.Header.Get("X-Error") != "" {
			event(w, "", exErrorChunk)
		}
		event(w, "", "[DONE]")
		for range 3 { // trailing junk after [DONE] is drained too
			io.WriteString(w, ": keep-alive\n\n")
		}
	})
	c := newClient(t, srv.URL, Options{})
	for i := range 4 {
		h := map[string]string{}
		if i == 1 {
			h["X-Error"] = "1"
		}
		rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", Headers: h})
		if i > 0 && rec.ConnectS != 0 {
			t.Errorf("request %d: connect %v on a reused connection", i, rec.ConnectS)
		}
		// The rest of the body is drained in the background; a request
		// sent before that ends may race it and dial. Wait, so the test
		// shows that a drained connection is the one reused.
		c.drains.Wait()
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections for 4 sequential requests, want 1", n)
	}
}

func TestStampDelays(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		for _, d := range []string{textEvent("hi"), audioEvent(testWAV(24000, testPCM(chunk80ms), false), ""), "[DONE]"} {
			fmt.Fprintf(w, ": sent=%d\n", time.Now().UnixNano())
			event(w, "", d)
		}
	})
	c := newClient(t, srv.URL, Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	if !rec.OK() || len(rec.StampDelaysS) != 3 {
		t.Fatalf("%s %s: stamp delays %v", rec.ErrorClass, rec.Error, rec.StampDelaysS)
	}
	for _, d := range rec.StampDelaysS {
		if math.IsNaN(d) || math.Abs(d) > 3600 {
			t.Errorf("stamp delay %v s is not a delay", d)
		}
	}
}

func TestStampParsing(t *testing.T) {
	now := time.Unix(100, 500_000_000)
	for _, tc := range []struct {
		comment string
		want    []float64
	}{
		{"sent=99000000000", []float64{1.5}},
		{"sent=100500000000", []float64{0}},
		{"sent=", nil},
		{"sent=12x", nil},
		{"keep-alive", nil},
		{"sent=" + strings.Repeat("9", 20), nil},
	} {
		s := &stream{rec: &results.Record{}}
		s.stamp([]byte(tc.comment), now)
		if got := s.rec.StampDelaysS; len(got) != len(tc.want) || (len(got) == 1 && !near(got[0], tc.want[0])) {
			t.Errorf("%q: %v, want %v", tc.comment, got, tc.want)
		}
	}
}

func TestReferenceContinuityAndExtraBodyFormat(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, speechDelta, `{"type":"speech.audio.delta","audio":"`+base64.StdEncoding.EncodeToString(testPCM(4800))+`"}`)
		event(w, speechDone, `{"type":"speech.audio.done"}`)
	})
	c := newClient(t, srv.URL, Options{ContinuityMode: continuity.Reference, Preroll: continuity.PrerollConfig{BufferS: 0.05}})
	// AudioFormat says wav but ExtraBody overrides response_format: the
	// client measures what was asked for.
	rec := do(t, c, Request{Kind: results.KindSpeechSSE, Prompt: "x", ExtraBody: map[string]any{"response_format": "pcm", "task_type": "CustomVoice"}})
	if !rec.OK() || rec.Continuity == nil || rec.Continuity.Mode != "reference" {
		t.Fatalf("%s %s %+v", rec.ErrorClass, rec.Error, rec.Continuity)
	}
	// One chunk: nothing to under-run, and 4800 bytes at 24 kHz = 0.1 s.
	if rec.Continuity.MaxUnderrunS != 0 || !rec.Continuity.OK["100"] || !near(rec.AudioDurationS, 0.1) {
		t.Errorf("continuity %+v duration %v", rec.Continuity, rec.AudioDurationS)
	}
	if b := srv.lastBody(t); b["response_format"] != "pcm" || b["task_type"] != "CustomVoice" {
		t.Errorf("body %v", b)
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{
		{BaseURL: "127.0.0.1:8000"},
		{BaseURL: "ftp://x"},
		{BaseURL: "http://"},
		{BaseURL: "http://x?a=b"},
		{BaseURL: "http://x", Timeout: -1},
		{BaseURL: "http://x", MaxConns: -1},
		{BaseURL: "http://x", Thresholds: []float64{0}},
		{BaseURL: "http://x", Preroll: continuity.PrerollConfig{BufferS: -1}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted it", o)
		}
	}
	for _, bad := range []string{"ftp://user:hunter2@x", "user:hunter2@127.0.0.1:8000"} {
		_, err := New(Options{BaseURL: bad})
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %v leaks the password", bad, err)
		}
	}
	c, err := New(Options{BaseURL: "http://127.0.0.1:8000/v1/"})
	if err != nil || c.base != "http://127.0.0.1:8000" {
		t.Errorf("base %q, err %v", c.base, err)
	}
}

func TestErrorBodyMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"error":{"message":"bad"}}`, "bad"},
		{`{"error":"worse"}`, "worse"},
		{`{"object":"error","message":"vllm says","code":400}`, "vllm says"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"detail":[{"loc":["body","input"],"msg":"field required"}]}`, `[{"loc":["body","input"],"msg":"field required"}]`},
		{"plain\ntext", "plain text"},
		{"", "(empty body)"},
		{strings.Repeat("é", 150), strings.Repeat("é", 100) + "..."},
	} {
		if got := errorBodyMessage(nil, []byte(tc.in)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeBase64Variants(t *testing.T) {
	var buf []byte
	for _, in := range []string{"AAECAw==", "AAECAw", "AAEC\nAw=="} {
		got, err := DecodeBase64(&buf, []byte(in))
		if err != nil || string(got) != "\x00\x01\x02\x03" {
			t.Errorf("%q: %x, %v", in, got, err)
		}
	}
	if _, err := DecodeBase64(&buf, []byte("AA-_")); err == nil {
		t.Error("URL-safe base64 accepted")
	}
}
