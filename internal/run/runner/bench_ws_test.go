//go:build linux

package runner_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

// wsLevels are the session levels of BenchmarkWSClientVsBareLoop.
var wsLevels = []int{100, 1000, 2000}

// wsKindsFlag names the WebSocket kinds BenchmarkWSClientVsBareLoop runs.
var wsKindsFlag = flag.String("omnibench.kinds", "speech-ws,realtime,realtime-audio", "comma-separated WebSocket kinds of BenchmarkWSClientVsBareLoop")

// The fixed schedule of bareServeFlags, which the WebSocket kinds' delays
// are measured against: the first audio chunk is due benchTTFA after the
// message that asks for it, chunk k benchChunk later per chunk (RTF 1, no
// jitter, no capacity limit).
const (
	benchTTFA  = 50 * time.Millisecond
	benchChunk = 80 * time.Millisecond
)

// scheduleDelaysMS are the delays in ms of audio chunks that arrived at
// offsets (seconds after the message asking for the audio) against the
// server's schedule: offset minus (benchTTFA + k*benchChunk) for chunk k.
// The simulator stamps SSE events only, so the schedule stands in for a
// stamp; both clients are measured against the same one.
func scheduleDelaysMS(offsetsS []float64) []float64 {
	d := make([]float64, len(offsetsS))
	for k, off := range offsetsS {
		due := benchTTFA + time.Duration(k)*benchChunk
		d[k] = off*1000 - float64(due.Microseconds())/1000
	}
	return d
}

// BenchmarkWSClientVsBareLoop is BenchmarkClientVsBareLoop for the
// WebSocket kinds: omnibench's client (runner.Run driving package
// wsclient, one utterance or turn per session) and a bare
// github.com/coder/websocket loop (dial, the session's messages, a read
// loop that timestamps each message and nothing else) side by side against
// the same `omnibench serve`, at 100, 1000 and 2000 sessions that all start
// at once. realtime-audio sends its input at once (AudioPace -1) on both
// sides, so that the input's pacing does not dominate the figures.
//
// Reported per kind and level, for both clients (omni-*, bare-*): CPU per
// audio chunk, the p50 and p99 delay of each chunk against the server's
// fixed schedule (scheduleDelaysMS), the memory per open session and
// errors; and the ratios omnibench / bare (cpu-ratio paired per iteration,
// p99-ratio of the pooled p99s). -omnibench.levels and -omnibench.profile
// work as for BenchmarkClientVsBareLoop; -omnibench.kinds selects kinds.
func BenchmarkWSClientVsBareLoop(b *testing.B) {
	ns := levels(b, wsLevels)
	ensureFiles(b, uint64(slices.Max(ns))+256)
	srv := startServeWith(b, append(bareServeFlags(), "--capacity", "0"))
	for kind := range strings.SplitSeq(*wsKindsFlag, ",") {
		kind = strings.TrimSpace(kind)
		scenario := "tts-short"
		if kind == results.KindRealtimeAudio {
			scenario = "voice-chat" // spoken prompts
		}
		wl := kindWorkload(b, scenario, kind)
		for _, n := range ns {
			b.Run(fmt.Sprintf("kind=%s/sessions=%d", kind, n), func(b *testing.B) {
				var omni, bare levelRuns
				clients := []func(ctx context.Context){
					func(ctx context.Context) { omni = append(omni, omniWSRun(ctx, b, srv.url, wl, kind, n)) },
					func(ctx context.Context) { bare = append(bare, bareWSRun(ctx, b, srv.url, wl, kind, n)) },
				}
				rotateClients(b, clients, func() {
					reportLevel(b, "omni", omni)
					reportLevel(b, "bare", bare)
					reportRatios(b, omni, bare)
				})
			})
		}
	}
}

// kindWorkload is the built-in scenario's workload as the given kind, as
// run --kind gives it.
func kindWorkload(b *testing.B, scenario, kind string) *scenarios.Workload {
	sc, err := scenarios.Get(scenario)
	if err != nil {
		b.Fatal(err)
	}
	sc = sc.Clone()
	sc.SetKind(kind)
	wl, err := sc.Workload()
	if err != nil {
		b.Fatalf("scenario %s as %s: %v", scenario, kind, err)
	}
	return wl.WithModel(simulator.DefaultModel) // the one `omnibench serve` serves
}

// omniWSRun is one closed-loop run of n sessions of wl's WebSocket kind
// through runner.Run.
func omniWSRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, kind string, n int) levelFigures {
	cfg := runner.Config{
		Target: url, Workload: wl, Scenario: wl.Scenario().Name, Seed: 1,
		Load:   load.Config{Concurrency: n, Requests: n},
		Client: client.Options{Timeout: time.Minute, IdleTimeout: 30 * time.Second},
		WS:     runner.WSOptions{Turns: 1, AudioPace: -1},
		Scrape: runner.ScrapeOff,
	}
	return runnerLevel(ctx, b, cfg, "omnibench-"+kind, n, func(r *results.Record) []float64 {
		return scheduleDelaysMS(r.ChunkArrivalsS)
	})
}

// wsScript is what the bare loop sends on one session and how it reads
// the answer: the messages before the turn, the turn's (clock: the index
// of the one the delays count from, as wsclient's records do), which
// messages carry audio and which one ends the turn.
type wsScript struct {
	path    string
	open    [][]byte
	turn    [][]byte
	clock   int
	isAudio func(typ websocket.MessageType, msg []byte) bool
	endType string // the type of the text message that ends the turn
}

// bareWSRun is the bare loop: n sessions at once, each a coder/websocket
// connection that sends its script and timestamps every message.
func bareWSRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, kind string, n int) levelFigures {
	scripts := make([]wsScript, n)
	for i := range n {
		scripts[i] = bareWSScript(b, wl, i)
	}
	wsURL := "ws" + strings.TrimPrefix(url, "http")
	return streamLevel(b, "bare-"+kind, n, func(i int) ([]float64, error) {
		return bareWSSession(ctx, wsURL, &scripts[i])
	}, func() {})
}

// bareWSSession runs one session of the bare loop and returns its audio
// chunks' delays against the schedule in ms.
func bareWSSession(ctx context.Context, wsURL string, s *wsScript) ([]float64, error) {
	c, _, err := websocket.Dial(ctx, wsURL+s.path, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	defer c.CloseNow()
	c.SetReadLimit(wsclient.DefaultMaxMessageBytes)
	var t0 time.Time
	for k, m := range slices.Concat(s.open, s.turn) {
		if k == len(s.open)+s.clock {
			t0 = time.Now()
		}
		if err := c.Write(ctx, websocket.MessageText, m); err != nil {
			return nil, err
		}
	}
	var offsets []float64
	var buf bytes.Buffer
	end := []byte(`"type":"` + s.endType + `"`)
	for {
		typ, r, err := c.Reader(ctx)
		if err != nil {
			return nil, err
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return nil, err
		}
		at := time.Since(t0).Seconds()
		if s.isAudio(typ, buf.Bytes()) {
			offsets = append(offsets, at)
		} else if typ == websocket.MessageText && hasType(buf.Bytes(), end) {
			break
		}
	}
	// The turn is measured: a close that fails (a server too loaded to
	// answer within the library's close timeout) is counted as an error
	// but keeps the turn's delays.
	delays := scheduleDelaysMS(offsets)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"session.close"}`)); err != nil {
		return delays, err
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil && !isNormalClose(err) {
		return delays, err
	}
	return delays, nil
}

// hasType reports whether a JSON message carries the "type" member
// typeMember, looked for in its first and last bytes only: the type comes
// first or, in a message marshalled from a map, after the base64 payload.
func hasType(msg, typeMember []byte) bool {
	const edge = 96
	return bytes.Contains(msg[:min(len(msg), edge)], typeMember) || bytes.Contains(msg[max(len(msg)-edge, 0):], typeMember)
}

// isNormalClose reports whether err is the peer's normal close, or the
// connection ending after it.
func isNormalClose(err error) bool {
	return websocket.CloseStatus(err) == websocket.StatusNormalClosure || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// bareWSScript is session i's script: the same messages wsclient sends for
// wl's kind, one utterance or turn.
func bareWSScript(b *testing.B, wl *scenarios.Workload, i int) wsScript {
	spec, text := wl.Request(i, 1), wl.Prompt(i, 1)
	enc := func(v any) []byte {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	deltaAudio := func(typ websocket.MessageType, msg []byte) bool {
		return typ == websocket.MessageText && hasType(msg, []byte(`audio.delta"`))
	}
	switch spec.Kind {
	case results.KindSpeechWS:
		cfg := map[string]any{"type": "session.config", "model": spec.Model, "voice": spec.Voice, "response_format": "pcm", "stream_audio": true}
		maps.Copy(cfg, spec.ExtraBody)
		return wsScript{
			path: wsclient.SpeechStreamPath, open: [][]byte{enc(cfg)},
			turn:  [][]byte{enc(map[string]string{"type": "input.text", "text": text}), []byte(`{"type":"input.done"}`)},
			clock: 1, endType: "session.done",
			isAudio: func(typ websocket.MessageType, _ []byte) bool { return typ == websocket.MessageBinary },
		}
	case results.KindRealtime:
		extra := map[string]any{"minicpmo45_native_duplex": false}
		maps.Copy(extra, spec.ExtraBody)
		sess := map[string]any{"modalities": []string{"audio", "text"}, "input_audio_format": "pcm16", "output_audio_format": "pcm16",
			"turn_detection": nil, "overlap_policy": "listen_only", "playback_commit_policy": "ack_only", "extra_body": extra,
			"model": spec.Model, "voice": spec.Voice}
		item := map[string]any{"type": "conversation.item.create", "item": map[string]any{"id": "item_u0", "type": "message", "role": "user",
			"content": []map[string]string{{"type": "input_text", "text": text}}}}
		return wsScript{
			path: wsclient.RealtimePath + "?duplex=1", open: [][]byte{enc(map[string]any{"type": "session.update", "session": sess})},
			turn: [][]byte{enc(item), []byte(`{"type":"response.create"}`)}, endType: "response.done", isAudio: deltaAudio,
		}
	case results.KindRealtimeAudio:
		pcm, err := wsclient.InputPCM(spec.InputAudio)
		if err != nil {
			b.Fatal(err)
		}
		turn := [][]byte{[]byte(`{"type":"input_audio_buffer.commit","final":false}`)}
		chunk := wsclient.InputSampleRate * 2 * int(wsclient.AppendChunk/time.Millisecond) / 1000
		for off := 0; off < len(pcm); off += chunk {
			a := base64.StdEncoding.EncodeToString(pcm[off:min(off+chunk, len(pcm))])
			turn = append(turn, enc(map[string]string{"type": "input_audio_buffer.append", "audio": a}))
		}
		turn = append(turn, []byte(`{"type":"input_audio_buffer.commit","final":true}`))
		return wsScript{
			path: wsclient.RealtimePath, open: [][]byte{enc(map[string]any{"type": "session.update", "model": spec.Model})},
			turn: turn, clock: len(turn) - 1, endType: "response.audio.done", isAudio: deltaAudio,
		}
	}
	b.Fatalf("kind %q is not a WebSocket kind", spec.Kind)
	return wsScript{}
}
