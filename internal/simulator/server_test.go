package simulator

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/sse"
)

func TestGracefulShutdownOnCancel(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := testConfig()
	cfg.Timing.RTF = 0.1 // 1.25 s of audio takes about 125 ms
	run, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, run.URL+"/v1/chat/completions",
		jsonBody(t, chatReq(prompt25, map[string]any{"modalities": []string{"audio"}})))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := sse.NewReader(resp.Body)
	if _, err := rd.Next(); err != nil { // the stream is under way
		t.Fatal(err)
	}
	cancel() // graceful: no new connections, the running stream finishes
	var last []byte
	n := 1
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		last = bytes.Clone(ev.Data)
		n++
	}
	resp.Body.Close()
	if string(last) != "[DONE]" || n != 14 {
		t.Errorf("stream after cancel: %d events, last %q; want all 13 audio events and [DONE]", n, last)
	}
	if err := run.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if c, err := net.Dial("tcp", run.Addr); err == nil {
		c.Close()
		t.Error("server still accepts connections after shutdown")
	}
	tr.CloseIdleConnections()
	if err := run.Close(); err != nil { // idempotent after shutdown
		t.Errorf("Close after shutdown: %v", err)
	}
	goleak.VerifyNone(t, ignore)
}

func TestCloseEndsStalledStreams(t *testing.T) {
	cfg := testConfig()
	cfg.Faults = Faults{Stall: 1, StallFor: time.Hour}
	run, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, map[string]any{"modalities": []string{"audio"}}))
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	for range 6 { // the events before the stall
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	// Close cancels the stalled handler instead of waiting an hour for it.
	if err := run.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := rd.Next(); err == nil {
		t.Error("stream continued after Close")
	}
}

func TestStartBadConfigAndAddr(t *testing.T) {
	if _, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", SampleRate: 5}); err == nil {
		t.Error("Start accepted a 5 Hz sample rate")
	}
	run := startSim(t, testConfig())
	cfg := testConfig()
	cfg.Addr = run.Addr
	if r, err := Start(t.Context(), cfg); err == nil {
		r.Close()
		t.Errorf("second Start on %s succeeded", run.Addr)
	}
}

// chunkSizes returns the PCM bytes of each audio event and all the audio.
func chunkSizes(t *testing.T, run *Running, prompt string) ([]int, []byte) {
	cs := doChat(t, run, chatReq(prompt, map[string]any{"audio": map[string]any{"format": "pcm"}}))
	var sizes []int
	for _, a := range cs.audio {
		sizes = append(sizes, len(a))
	}
	return sizes, pcmOf(t, cs.audio, false)
}

func TestDeterminismUnderSeed(t *testing.T) {
	cfg := testConfig()
	cfg.Timing.Jitter = 0.3
	cfg.Seed = 11
	a, b := startSim(t, cfg), startSim(t, cfg)
	cfg.Seed = 12
	c := startSim(t, cfg)
	const prompt = "The quick brown fox jumps over the lazy dog"
	sa, pa := chunkSizes(t, a, prompt)
	sb, pb := chunkSizes(t, b, prompt)
	sc, pc := chunkSizes(t, c, prompt)
	if !slices.Equal(sa, sb) || !bytes.Equal(pa, pb) {
		t.Errorf("same seed: chunk sizes %v vs %v (audio equal %v)", sa, sb, bytes.Equal(pa, pb))
	}
	if slices.Equal(sa, sc) {
		t.Errorf("seeds 11 and 12 gave the same chunk sizes %v", sa)
	}
	if !bytes.Equal(pa, pc) {
		t.Error("the audio itself depends on the seed; it should depend on the text only")
	}
	// The second identical request differs from the first but matches the
	// second request on the twin server, whatever else ran in between.
	chunkSizes(t, b, "something unrelated")
	sa2, _ := chunkSizes(t, a, prompt)
	sb2, _ := chunkSizes(t, b, prompt)
	if slices.Equal(sa2, sa) || !slices.Equal(sa2, sb2) {
		t.Errorf("second request: %v vs twin %v (first was %v)", sa2, sb2, sa)
	}
}

// TestConcurrentRequests runs every endpoint concurrently (for the race
// detector) and checks the server's bookkeeping afterwards.
func TestConcurrentRequests(t *testing.T) {
	cfg := testConfig()
	cfg.Topology = []int{2, 3, 2}
	cfg.Capacity = 4
	run := startSim(t, cfg)
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				if cs := doChat(t, run, chatReq(prompt25, nil)); !cs.done {
					t.Error("chat stream without [DONE]")
				}
			case 1:
				if _, _, body := doSpeech(t, run, speechReq(input10, nil)); len(body) != 44+24000 {
					t.Errorf("speech: %d bytes", len(body))
				}
			default:
				_, _, body := doSpeech(t, run, speechReq(input10, map[string]any{"stream_format": "audio", "response_format": "wav"}))
				if _, pcm, err := wav.Decode(body); err != nil || len(pcm) != 24000 {
					t.Errorf("raw stream: %v, %d bytes", err, len(pcm))
				}
			}
		})
	}
	wg.Wait()
	mfs, _ := scrape(t, run.URL, "")
	if v := counter(mfs, p+"requests_success_total", m{"finished_reason": "stop"}); v != 24 {
		t.Errorf("success %v, want 24", v)
	}
	if v := sample(mfs, p+"num_requests_running", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("running %v when idle", v)
	}
	if v := sample(mfs, p+"num_requests_waiting", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("waiting %v when idle", v)
	}
	frames := counter(mfs, p+"audio_frames_total", lbl(0)) + counter(mfs, p+"audio_frames_total", lbl(1))
	if frames != 8*30000+16*12000 {
		t.Errorf("frames %v, want %d", frames, 8*30000+16*12000)
	}
}

func TestTopologies(t *testing.T) {
	for _, topo := range [][]int{{1}, {1, 1}, {2, 1, 1, 3}} {
		cfg := testConfig()
		cfg.Topology = topo
		run := startSim(t, cfg)
		if cs := doChat(t, run, chatReq("Hi there", nil)); !cs.done || len(cs.audio) == 0 {
			t.Errorf("topology %v: done %v, %d audio events", topo, cs.done, len(cs.audio))
		}
		doSpeech(t, run, speechReq(input10, nil))
		mfs, _ := scrape(t, run.URL, "")
		last := strconv.Itoa(len(topo) - 1)
		var ttfp, durations uint64
		for _, name := range []string{"audio_ttfp_s", "audio_duration_s"} {
			for _, mt := range mfs[p+name].GetMetric() {
				for _, lp := range mt.GetLabel() {
					if lp.GetName() == "stage" && lp.GetValue() != last {
						t.Errorf("topology %v: %s on stage %s, want the last stage %s", topo, name, lp.GetValue(), last)
					}
				}
				if name == "audio_ttfp_s" {
					ttfp += mt.GetHistogram().GetSampleCount()
				} else {
					durations += mt.GetHistogram().GetSampleCount()
				}
			}
		}
		if ttfp != 1 || durations != 2 {
			t.Errorf("topology %v: %d TTFP and %d duration observations, want 1 and 2", topo, ttfp, durations)
		}
		pairs := map[string]bool{}
		for _, mt := range mfs[p+"transfer_size_bytes"].GetMetric() {
			l := map[string]string{}
			for _, lp := range mt.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			pairs[l["from_stage"]+"->"+l["to_stage"]] = true
		}
		if hops, want := len(pairs), len(topo)-1; hops != want {
			t.Errorf("topology %v: transfers between stages %v, want %d adjacent pairs", topo, pairs, want)
		}
	}
}
