package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scrape"
)

// fastTiming keeps simulated responses short: about 0.4 s of audio each,
// generated well faster than real time.
func fastTiming() simulator.Timing {
	t := simulator.DefaultTiming()
	t.TTFT = 5 * time.Millisecond
	t.WordInterval = time.Millisecond
	t.TTFA = 20 * time.Millisecond
	t.ChunkAudio = 100 * time.Millisecond
	t.RTF = 0.05
	t.AudioPerChar = 20 * time.Millisecond
	t.MinAudio = 200 * time.Millisecond
	t.MaxAudio = time.Second
	return t
}

func startSimulator(t *testing.T, stats bool) *simulator.Running {
	t.Helper()
	return startSimulatorConfig(t, simulator.Config{StatsEnabled: stats, Seed: 7})
}

func startSimulatorConfig(t *testing.T, cfg simulator.Config) *simulator.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg.Addr, cfg.Timing = "127.0.0.1:0", fastTiming()
	run, err := simulator.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	return run
}

func scrapeSim(t *testing.T, run *simulator.Running) scrape.Families {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := scrape.Fetch(ctx, run.URL+"/metrics", scrape.AcceptAuto)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := snap.Families()
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// streamChat sends one streaming chat request with PCM audio over plain
// net/http and records what a client sees: TTFP, the audio chunk timeline
// and its frames, the finish reason and the continuity of playback.
func streamChat(ctx context.Context, base string) (results.Record, error) {
	rec := results.Record{Kind: results.KindChat, SampleRate: 24000, SampleWidth: 2, Channels: 1}
	body := `{"model":"` + simulator.DefaultModel + `","stream":true,"modalities":["text","audio"],"audio":{"format":"pcm"},` +
		`"messages":[{"role":"user","content":"Say hello to the benchmark, please."}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return rec, err
	}
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rec, err
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		rec.ErrorClass = results.ErrHTTPStatus
		return rec, nil
	}
	br := bufio.NewReader(resp.Body)
	done := false
	for !done {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return rec, err
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Error    json.RawMessage `json:"error"`
			Modality string          `json:"modality"`
			Choices  []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return rec, fmt.Errorf("event %q: %w", data, err)
		}
		if chunk.Error != nil {
			rec.ErrorClass = results.ErrStreamError
		}
		for _, c := range chunk.Choices {
			if c.FinishReason != nil {
				rec.FinishReason = *c.FinishReason
			}
			if chunk.Modality != "audio" || c.Delta.Content == "" {
				continue
			}
			pcm, err := base64.StdEncoding.DecodeString(c.Delta.Content)
			if err != nil {
				return rec, err
			}
			at := time.Since(sent).Seconds()
			if rec.TTFPS == 0 {
				rec.TTFPS = at
			}
			rec.ChunkArrivalsS = append(rec.ChunkArrivalsS, at)
			rec.ChunkBytes = append(rec.ChunkBytes, len(pcm))
			rec.AudioBytes += int64(len(pcm))
		}
	}
	if !done && rec.ErrorClass == "" {
		rec.ErrorClass = results.ErrTruncated
	}
	if rec.ErrorClass != "" {
		return rec, nil
	}
	rec.AudioFrames = rec.AudioBytes / 2
	res := continuity.Simulate(continuity.Input{ArrivalsS: rec.ChunkArrivalsS, Bytes: rec.ChunkBytes, SampleRate: 24000}, continuity.Default)
	rec.Continuity = &results.Continuity{Mode: "default", MaxUnderrunS: res.MaxUnderrunS,
		OK: map[string]bool{continuity.ThresholdLabel(0.1): res.Continuous(0.1)}}
	return rec, nil
}

// traffic sends n concurrent streaming chat requests.
func traffic(t *testing.T, base string, n int) []results.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := make([]results.Record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { recs[i], errs[i] = streamChat(ctx, base) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

func TestSimulatorStatsOn(t *testing.T) {
	run := startSimulator(t, true)
	before := scrapeSim(t, run)
	recs := traffic(t, run.URL, 3)
	after := scrapeSim(t, run)
	fig := FiguresFromRecords(recs)
	if fig.CompletedTotal != 3 || fig.ChatAudioResponses != 3 || fig.AudioFrames == 0 {
		t.Fatalf("client figures = %+v", fig)
	}
	rep := Evaluate(Input{Before: before, After: after, Run: &fig}, profileRules(t))
	if !rep.OK() {
		t.Fatalf("profile fails on the simulator with stats on:\n%s", failures(rep))
	}
	if !strings.HasPrefix(rep.Stats, "on") {
		t.Errorf("stats = %q", rep.Stats)
	}
	res := byRule(rep)
	for _, name := range []string{ruleSuccess, ruleE2E, ruleTTFPCount, ruleFrames, ruleContinuity, ruleTTFPSum} {
		if r := res[name]; r.Status != Pass {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r := res[ruleFrames]; r.Observed != fmt.Sprint(fig.AudioFrames) {
		t.Errorf("server frames %s, client %d: the simulator should count exactly what it sent", r.Observed, fig.AudioFrames)
	}
	// The client's figures off by one request fail the count rules.
	fig.Completed["stop"]++
	fig.CompletedTotal++
	rep = Evaluate(Input{Before: before, After: after, Run: &fig}, profileRules(t))
	if r := byRule(rep)[ruleE2E]; r.Status != Fail || r.Difference != "-1 (-25%)" {
		t.Errorf("off-by-one e2e: %+v", r)
	}
}

func TestSimulatorStatsOff(t *testing.T) {
	run := startSimulator(t, false)
	before := scrapeSim(t, run)
	recs := traffic(t, run.URL, 2)
	after := scrapeSim(t, run)
	fig := FiguresFromRecords(recs)
	rep := Evaluate(Input{Before: before, After: after, Run: &fig}, profileRules(t))
	if !rep.OK() {
		t.Fatalf("profile fails on the simulator with stats off:\n%s", failures(rep))
	}
	if !strings.HasPrefix(rep.Stats, "off") {
		t.Errorf("stats = %q", rep.Stats)
	}
	res := byRule(rep)
	if r := res["stats off: pipeline families present and empty"]; r.Status != Pass {
		t.Errorf("gating: %+v", r)
	}
	if r := res[ruleE2E]; r.Status != Skip {
		t.Errorf("run comparison with stats off: %+v", r)
	}
	// Declaring stats on for this server fails the gating rule.
	rep = Evaluate(Input{After: after, Stats: StatsOn}, profileRules(t))
	if r := byRule(rep)["stats on: upstream vllm:* stage/replica families present"]; r.Status != Fail {
		t.Errorf("stats on declared for a stats-off server: %+v", r)
	}
}

func TestSimulatorCurrentPrefix(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := simulator.Start(ctx, simulator.Config{Addr: "127.0.0.1:0", StatsEnabled: true, Prefix: "vllm_omni:", Timing: fastTiming()})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	before := scrapeSim(t, run)
	recs := traffic(t, run.URL, 1)
	after := scrapeSim(t, run)
	fig := FiguresFromRecords(recs)
	rep := Evaluate(Input{Before: before, After: after, Run: &fig}, profileRules(t))
	if !rep.OK() {
		t.Fatalf("profile fails on vllm_omni: names:\n%s", failures(rep))
	}
	if r := byRule(rep)["audio_ttfp_s: exists"]; r.Family != "vllm_omni:audio_ttfp_s" {
		t.Errorf("family shown as %q, want the exposed name", r.Family)
	}
}

// With injected faults, client and server still agree: aborts (500 answers
// and mid-stream error events) on both sides, and every other figure over
// the requests that did complete.
func TestSimulatorFaults(t *testing.T) {
	run := startSimulatorConfig(t, simulator.Config{StatsEnabled: true, Seed: 11,
		Faults: simulator.Faults{HTTP500: 0.3, ErrorEvent: 0.3}})
	before := scrapeSim(t, run)
	recs := traffic(t, run.URL, 10)
	after := scrapeSim(t, run)
	fig := FiguresFromRecords(recs)
	if fig.Completed["abort"] == 0 || fig.CompletedTotal == 0 {
		t.Fatalf("want both aborted and completed requests with seed 11, got %+v", fig)
	}
	rep := Evaluate(Input{Before: before, After: after, Run: &fig}, profileRules(t))
	if !rep.OK() {
		t.Fatalf("client and server disagree under faults:\n%s", failures(rep))
	}
	if r := byRule(rep)["requests_success_total matches the client's completed requests (finished_reason=abort)"]; r.Status != Pass {
		t.Errorf("abort rule: %+v", r)
	}
}
