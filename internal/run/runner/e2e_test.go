package runner

// End-to-end tests of Run against the real simulator on loopback: every
// request kind, every load model, every fault the simulator injects, warm-up
// exclusion, the duration bound, interruption and reproducibility under a
// seed. The simulator runs with millisecond timing so a request takes a few
// tens of milliseconds.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
)

func TestMain(m *testing.M) {
	if file := os.Getenv(StaticExpositionEnv); file != "" {
		os.Exit(serveStaticExposition(file))
	}
	if os.Getenv(BusyLoopEnv) != "" {
		os.Exit(busyLoop())
	}
	goleak.VerifyTestMain(m)
}

// runGuard bounds every run of these tests: a run that does not stop on its
// own is cut off and then fails its test as interrupted.
const runGuard = 30 * time.Second

// e2eTiming is millisecond-scale timing: 100..400 ms of audio in 40 ms
// chunks generated at RTF 0.05, so a response takes about 5 + 20 ms.
func e2eTiming() simulator.Timing {
	return simulator.Timing{
		TTFT:         2 * time.Millisecond,
		WordInterval: time.Millisecond,
		TTFA:         5 * time.Millisecond,
		ChunkAudio:   40 * time.Millisecond,
		RTF:          0.05,
		Jitter:       0.1,
		AudioPerChar: 3 * time.Millisecond,
		MinAudio:     100 * time.Millisecond,
		MaxAudio:     400 * time.Millisecond,
	}
}

// e2eSimConfig is the simulator the tests run against: fast timing, server
// metrics on, SSE send stamps on.
func e2eSimConfig() simulator.Config {
	cfg := simulator.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.StatsEnabled = true
	cfg.Seed = 7
	cfg.Timing = e2eTiming()
	return cfg
}

// startSim starts a fresh simulator for one test, serving the model of wl;
// mutate adjusts its configuration (faults, timing) first.
func startSim(t *testing.T, wl *scenarios.Workload, mutate func(*simulator.Config)) *simulator.Running {
	t.Helper()
	cfg := e2eSimConfig()
	cfg.Model = wl.Scenario().Model
	if mutate != nil {
		mutate(&cfg)
	}
	// Not t.Context(): its cancellation would start a graceful shutdown
	// while Cleanup closes the server anyway.
	sim, err := simulator.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("closing the simulator: %v", err)
		}
	})
	return sim
}

// workload builds the workload of a built-in scenario with the kind and
// audio format replaced.
func workload(t *testing.T, scenario, kind, format string) *scenarios.Workload {
	t.Helper()
	sc, err := scenarios.Get(scenario)
	if err != nil {
		t.Fatal(err)
	}
	sc = sc.Clone()
	if kind != "" {
		sc.SetKind(kind) // as run --kind does
	}
	if format != "" {
		sc.AudioFormat = format
	}
	if sc.AudioFormat == scenarios.FormatPCM && sc.PCMSampleRate == 0 {
		sc.PCMSampleRate = simulator.DefaultSampleRate
	}
	wl, err := sc.Workload()
	if err != nil {
		t.Fatalf("scenario %s as %s/%s: %v", scenario, kind, format, err)
	}
	return wl
}

// chatWorkload is the chat-voice scenario (streaming chat, text and WAV audio).
func chatWorkload(t *testing.T) *scenarios.Workload { return workload(t, "chat-voice", "", "") }

// transportEnv names the HTTP transport of the runs' clients when set (own
// or std): CI runs the suite once on each. Only the tests read it.
const transportEnv = "OMNIBENCH_HTTP_TRANSPORT"

// baseConfig is a closed-loop run of n requests at concurrency c against
// target, scraping its /metrics.
func baseConfig(target string, wl *scenarios.Workload, n, c int) Config {
	return Config{
		Target:   target,
		Workload: wl,
		Scenario: "e2e",
		Seed:     1,
		Load:     load.Config{Concurrency: c, Requests: n, Seed: 1, Grace: 5 * time.Second},
		Client:   client.Options{Timeout: 20 * time.Second, IdleTimeout: 10 * time.Second, HTTPTransport: os.Getenv(transportEnv)},
		Scrape:   ScrapeOn,
		Version:  "test",
	}
}

// ran is a run's Outcome with the full records it streamed, read back from
// its JSONL (the Outcome itself keeps only their figures).
type ran struct {
	*Outcome
	Records []results.Record
	jsonl   []byte // the results file as written
}

// mustRun runs cfg and fails the test unless the run completed without an
// error or an interruption. The JSONL stream it wrote is checked too.
func mustRun(t *testing.T, cfg Config) *ran {
	t.Helper()
	out, err := runChecked(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Interrupted {
		t.Fatal("the run reports an interruption")
	}
	return out
}

// runChecked runs cfg (guarded by runGuard), writing its JSONL to a buffer,
// and checks that the buffer reads back as the same records.
func runChecked(t *testing.T, cfg Config) (*ran, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runGuard)
	defer cancel()
	var jsonl bytes.Buffer
	cfg.Out = &jsonl
	out, err := Run(ctx, cfg)
	if out == nil {
		if err == nil {
			t.Fatal("Run returned neither an outcome nor an error")
		}
		return nil, err
	}
	raw := slices.Clone(jsonl.Bytes())
	h, recs, rerr := results.Read(&jsonl)
	if rerr != nil {
		t.Fatalf("the results JSONL does not read back: %v", rerr)
	}
	if h.Type != "header" || h.SchemaVersion != results.SchemaVersion || h.Seed != cfg.Seed || h.Mode != cfg.Load.Mode() {
		t.Errorf("JSONL header %+v does not describe the run", h)
	}
	if len(recs) != out.Set.Len() {
		t.Errorf("JSONL holds %d records, the outcome %d", len(recs), out.Set.Len())
	}
	// The outcome's figures are those of the records written.
	if out.Summary != nil {
		got, want := summaryText(stripRun(out.Summary)), summaryText(summary.Compute(recs, cfg.Summary))
		if got != want {
			t.Errorf("the outcome's summary differs from the JSONL records'\n got %s\nwant %s", got, want)
		}
	}
	// The saturation verdict ends the file, also after an interrupt.
	if c := h.Client; c == nil || c.Saturated != out.Health.Saturated || c.ClientDelayMS != out.Health.ClientDelayMS || !slices.Equal(c.Reasons, out.Health.Reasons) ||
		c.Cause != string(out.Health.Cause) || c.Cause == "" || c.Warning != out.Health.Warning() {
		t.Errorf("JSONL client line %+v, the outcome's health %+v", c, out.Health)
	}
	// So is its HTML: charts from the Set, the worst response picked live.
	if out.Summary != nil {
		rep := report.RunReport{Header: out.Header, Summary: out.Summary}
		var live, file bytes.Buffer
		errLive := report.WriteHTML(&live, report.HTMLReport{Title: "t", Sections: report.RunSectionsSet(rep, out.Set, out.Worst)})
		errFile := report.WriteHTML(&file, report.HTMLReport{Title: "t", Sections: report.RunSections(rep, recs)})
		if errLive != nil || errFile != nil || live.String() != file.String() {
			t.Errorf("the run's HTML differs from the HTML of its JSONL records (%v, %v)", errLive, errFile)
		}
	}
	return &ran{Outcome: out, Records: recs, jsonl: raw}, err
}

// summaryText is s and its bench block as text, for comparing summaries
// that hold NaN (a one-sample std), which reflect.DeepEqual never finds
// equal. Numbers are rounded to 12 digits: the JSONL's order is the order of
// the writes, which concurrent requests can make differ from the order the
// runner added them, and a sum over another order can differ in its last bit.
func summaryText(s *summary.Summary) string {
	text := fmt.Sprintf("%+v", *s) + fmt.Sprint(s.Bench())
	if q := s.Quality; q != nil {
		text += fmt.Sprintf("%+v", *q)
		if q.ASR != nil {
			text += fmt.Sprintf("%+v", *q.ASR)
		}
	}
	text = regexp.MustCompile(`(bench|Quality|ASR):0x[0-9a-f]+`).ReplaceAllString(text, "")
	return regexp.MustCompile(`-?[0-9]+\.[0-9]+(e[-+][0-9]+)?`).ReplaceAllStringFunc(text, func(v string) string {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return v
		}
		return strconv.FormatFloat(f, 'g', 12, 64)
	})
}

// stripRun is s without what the runner adds to a summary beyond the
// records (the load mode, the drops).
func stripRun(s *summary.Summary) *summary.Summary {
	c := *s
	c.Mode = ""
	c.Requests.Dropped, c.Requests.DropRate = 0, 0
	if q := c.Quality; q != nil && q.ASR != nil {
		// The transcription queue's counts are the live run's alone.
		qc, ac := *q, *q.ASR
		ac.Offered, ac.Skipped, ac.Failed = 0, 0, 0
		qc.ASR, c.Quality = &ac, &qc
		if ac.Scored == 0 {
			qc.ASR = nil
		}
		if qc.ASR == nil && qc.Checked == 0 {
			c.Quality = nil
		}
	}
	return &c
}

// row returns the server-vs-client comparison called figure.
func row(t *testing.T, rows []report.Comparison, figure string) report.Comparison {
	t.Helper()
	for _, r := range rows {
		if r.Figure == figure {
			return r
		}
	}
	t.Fatalf("no server-vs-client row %q", figure)
	return report.Comparison{}
}

// wantAgree checks that a comparison row has both sides, equal to want.
func wantAgree(t *testing.T, rows []report.Comparison, figure string, want float64) {
	t.Helper()
	r := row(t, rows, figure)
	switch {
	case r.Server == nil || r.Client == nil:
		t.Errorf("%s: server %v, client %v: want both %v", figure, fp(r.Server), fp(r.Client), want)
	case *r.Server != want || *r.Client != want:
		t.Errorf("%s: server %v, client %v, want both %v", figure, *r.Server, *r.Client, want)
	}
}

// wantSides checks that a comparison row has both sides, equal to server
// and client.
func wantSides(t *testing.T, rows []report.Comparison, figure string, server, client float64) {
	t.Helper()
	r := row(t, rows, figure)
	if r.Server == nil || r.Client == nil || *r.Server != server || *r.Client != client {
		t.Errorf("%s: server %v, client %v, want server %v, client %v", figure, fp(r.Server), fp(r.Client), server, client)
	}
}

// fp formats an optional figure.
func fp(v *float64) any {
	if v == nil {
		return "none"
	}
	return *v
}

// counter is the increase of a server counter family over the run.
func counter(t *testing.T, out *ran, family string, match map[string]string) float64 {
	t.Helper()
	if out.Delta == nil {
		t.Fatalf("no /metrics delta (%s)", out.ScrapeNote)
	}
	v, ok := out.Delta.CounterDelta(family, match)
	if !ok {
		t.Fatalf("the /metrics delta has no %s %v", family, match)
	}
	return v
}

func sumFrames(recs []results.Record) int64 {
	var n int64
	for i := range recs {
		n += recs[i].AudioFrames
	}
	return n
}

func TestRunRequestKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario, kind, format string
		sse                          bool // events carry send stamps
	}{
		{"chat-wav", "chat-voice", results.KindChat, scenarios.FormatWAV, true},
		{"chat-pcm", "chat-voice", results.KindChat, scenarios.FormatPCM, true},
		{"speech-wav", "tts-long", results.KindSpeech, scenarios.FormatWAV, false},
		{"speech-pcm", "speech-pcm", results.KindSpeech, scenarios.FormatPCM, false},
		{"speech-sse-wav", "tts-short", results.KindSpeechSSE, scenarios.FormatWAV, true},
		{"speech-sse-pcm", "tts-short", results.KindSpeechSSE, scenarios.FormatPCM, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wl := workload(t, tc.scenario, tc.kind, tc.format)
			// Stamped as run's embedded simulator is: the client measures
			// the send-stamp delay of every SSE event.
			sim := startSim(t, wl, func(c *simulator.Config) { c.Stamp = true })
			const n = 6
			out := mustRun(t, baseConfig(sim.URL, wl, n, 2))

			if len(out.Records) != n {
				t.Fatalf("%d records, want %d", len(out.Records), n)
			}
			for i := range out.Records {
				r := &out.Records[i]
				if !r.OK() {
					t.Errorf("seq %d failed: %s: %s", r.Seq, r.ErrorClass, r.Error)
					continue
				}
				if r.Kind != tc.kind || r.Endpoint != scenarios.DefaultEndpoint(tc.kind) {
					t.Errorf("seq %d: kind %q endpoint %q", r.Seq, r.Kind, r.Endpoint)
				}
				if r.AudioFrames <= 0 || r.SampleRate != simulator.DefaultSampleRate || len(r.ChunkBytes) == 0 {
					t.Errorf("seq %d: %d audio frames at %d Hz in %d chunks", r.Seq, r.AudioFrames, r.SampleRate, len(r.ChunkBytes))
				}
				if r.Continuity == nil || r.Continuity.Preroll == nil || r.Continuity.StallResume == nil {
					t.Errorf("seq %d: continuity %+v", r.Seq, r.Continuity)
				}
				if !(r.RTFE2E > 0) || !(r.RTFLastChunk > 0) || r.RTFLastChunk > r.RTFE2E {
					t.Errorf("seq %d: RTF last chunk %v, e2e %v", r.Seq, r.RTFLastChunk, r.RTFE2E)
				}
				if tc.sse && len(r.StampDelaysS) == 0 {
					t.Errorf("seq %d: no send-stamp delays from an SSE stream", r.Seq)
				}
				if !tc.sse && len(r.StampDelaysS) != 0 {
					t.Errorf("seq %d: %d stamp delays from a raw byte stream", r.Seq, len(r.StampDelaysS))
				}
				if tc.kind == results.KindChat && (r.TTFPS <= 0 || r.TTFTS <= 0) {
					t.Errorf("seq %d: chat TTFP %v TTFT %v", r.Seq, r.TTFPS, r.TTFTS)
				}
			}
			s := out.Summary
			if s.Requests.Total != n || s.Requests.Completed != n || s.Requests.WithAudio != n {
				t.Errorf("summary requests %+v, want %d completed with audio", s.Requests, n)
			}
			if s.Audio.TotalFrames != sumFrames(out.Records) {
				t.Errorf("summary frames %d, records %d", s.Audio.TotalFrames, sumFrames(out.Records))
			}

			frames := float64(sumFrames(out.Records))
			if got := counter(t, out, "audio_frames_total", nil); got != frames {
				t.Errorf("server audio_frames_total rose by %v, the client decoded %v frames", got, frames)
			}
			rows := out.ServerVsClient()
			wantAgree(t, rows, "requests completed", n)
			wantAgree(t, rows, "requests aborted", 0)
			wantAgree(t, rows, "audio frames", frames)
			wantAgree(t, rows, "e2e observations", n)
			wantAgree(t, rows, "requests without audio (skipped)", 0)
			// Chat and, on a current server, speech streams record TTFP.
			wantAgree(t, rows, "TTFP observations", n)
			if tc.kind != results.KindChat {
				wantAgree(t, rows, "speech streams completed", n)
			}
		})
	}
}

// TestRunEmbeddedSimulator leaves Target empty: Run starts the simulator
// itself, says so in the header and scrapes it.
func TestRunEmbeddedSimulator(t *testing.T) {
	t.Parallel()
	cfg := baseConfig("", chatWorkload(t), 4, 2)
	cfg.Simulator = e2eSimConfig()
	var log bytes.Buffer
	cfg.Log = &log
	out := mustRun(t, cfg)
	if !out.Header.Simulator || !strings.HasPrefix(out.Header.Target, "http://127.0.0.1:") {
		t.Errorf("header: simulator %v, target %q", out.Header.Simulator, out.Header.Target)
	}
	if !strings.Contains(log.String(), "started the embedded simulator at "+out.Header.Target) {
		t.Errorf("the log does not name the embedded simulator: %q", log.String())
	}
	if out.Summary.Requests.Completed != 4 {
		t.Errorf("summary requests %+v", out.Summary.Requests)
	}
	wantAgree(t, out.ServerVsClient(), "audio frames", float64(sumFrames(out.Records)))
}

func TestRunClosedLoop(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	var started, recorded atomic.Int64
	cfg := baseConfig(sim.URL, wl, 9, 3)
	cfg.Scrape = ScrapeOff // scraping is checked elsewhere; it is slow under -race
	cfg.OnStart = func(load.Arrival) { started.Add(1) }
	cfg.OnRecord = func(*results.Record) { recorded.Add(1) }
	out := mustRun(t, cfg)
	if out.Header.Mode != "closed" || out.Header.Concurrency != 3 || out.Summary.Mode != "closed" {
		t.Errorf("mode: header %q (concurrency %d), summary %q", out.Header.Mode, out.Header.Concurrency, out.Summary.Mode)
	}
	if out.Summary.FromIntended {
		t.Error("a closed loop measures from the send, not from an intended start")
	}
	if out.Load.Started != 9 || out.Load.Completed != 9 || len(out.Records) != 9 || out.Summary.Requests.Completed != 9 {
		t.Errorf("load %+v, %d records, summary %+v", out.Load, len(out.Records), out.Summary.Requests)
	}
	if started.Load() != 9 || recorded.Load() != 9 {
		t.Errorf("OnStart called %d times, OnRecord %d, want 9 each", started.Load(), recorded.Load())
	}
	seqs := make([]int, 0, len(out.Records))
	for _, r := range out.Records {
		seqs = append(seqs, r.Seq)
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != i {
			t.Fatalf("sequence numbers %v, want 0..8", seqs)
		}
	}
}

func TestRunOpenLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arrival    string
		burstiness float64
	}{
		{load.Constant, 0},
		{load.Poisson, 0},
		{load.Gamma, 0.5},
	} {
		t.Run(tc.arrival, func(t *testing.T) {
			t.Parallel()
			wl := chatWorkload(t)
			sim := startSim(t, wl, nil)
			const n, rate = 8, 100.0
			cfg := baseConfig(sim.URL, wl, n, 0)
			cfg.Load.Rate, cfg.Load.Arrival, cfg.Load.Burstiness = rate, tc.arrival, tc.burstiness
			cfg.Scrape = ScrapeOff
			out := mustRun(t, cfg)

			if out.Header.Mode != "open" || out.Header.Rate != rate || out.Header.Arrival != tc.arrival {
				t.Errorf("header mode %q rate %v arrival %q", out.Header.Mode, out.Header.Rate, out.Header.Arrival)
			}
			if !out.Summary.FromIntended || out.Summary.Mode != "open" {
				t.Errorf("summary: from intended %v, mode %q; an open loop measures from the intended start", out.Summary.FromIntended, out.Summary.Mode)
			}
			if out.Load.Started != n || len(out.Load.Lags) != n || len(out.Records) != n || out.Load.TargetRate != rate {
				t.Errorf("load %+v, %d records", out.Load, len(out.Records))
			}
			recs := slices.Clone(out.Records)
			slices.SortFunc(recs, func(a, b results.Record) int { return a.Seq - b.Seq })
			for i := range recs {
				r := &recs[i]
				if r.LagS < 0 || math.Abs(r.SentS-r.IntendedS-r.LagS) > 1e-12 {
					t.Errorf("seq %d: intended %v sent %v lag %v", r.Seq, r.IntendedS, r.SentS, r.LagS)
				}
				if i > 0 && r.IntendedS < recs[i-1].IntendedS {
					t.Errorf("seq %d intended at %v, before seq %d at %v", r.Seq, r.IntendedS, recs[i-1].Seq, recs[i-1].IntendedS)
				}
				if tc.arrival == load.Constant {
					// One arrival every 1/rate: compare in integer
					// microseconds, the offsets are whole nanoseconds.
					if got, want := math.Round(r.IntendedS*1e6), math.Round(float64(i)/rate*1e6); got != want {
						t.Errorf("constant arrivals: seq %d intended at %v µs, want %v µs", r.Seq, got, want)
					}
				}
			}
			lag, ok := out.Summary.Metric("schedule_lag_ms")
			if !ok || lag.N != n {
				t.Errorf("schedule lag metric %+v (present %v), want %d values", lag, ok, n)
			}
		})
	}
}

// TestRunMaxInflightDrops offers 1000 arrivals a second to one slot while
// each response takes over 100 ms: the arrivals due while the slot is busy
// are dropped, counted, and reported through OnDrop; none gets a record.
func TestRunMaxInflightDrops(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, func(c *simulator.Config) { c.Timing.TTFA = 100 * time.Millisecond })
	const n = 20
	cfg := baseConfig(sim.URL, wl, n, 0)
	cfg.Load.Rate, cfg.Load.Arrival, cfg.Load.MaxInflight = 1000, load.Constant, 1
	cfg.Scrape = ScrapeOff
	var drops atomic.Int64
	cfg.OnDrop = func(load.Arrival) { drops.Add(1) }
	out := mustRun(t, cfg)

	l := out.Load
	if l.Dropped < 1 || l.Started+l.Dropped != n || l.Scheduled != n {
		t.Errorf("load: started %d + dropped %d (scheduled %d), want %d with drops", l.Started, l.Dropped, l.Scheduled, n)
	}
	if int(drops.Load()) != l.Dropped {
		t.Errorf("OnDrop called %d times, %d dropped", drops.Load(), l.Dropped)
	}
	if len(out.Records) != l.Started || out.Summary.Requests.Total != l.Started {
		t.Errorf("%d records, summary total %d, %d started", len(out.Records), out.Summary.Requests.Total, l.Started)
	}
	if d := out.Document().Load; d.Dropped != l.Dropped || d.Mode != "open" {
		t.Errorf("document load %+v", d)
	}
}

// stallIdleTimeout is the client's idle timeout in the stall tests. The
// simulator's gaps between events are a few milliseconds (e2eTiming) and
// the stall lasts until the client leaves, so the timeout only has to be
// longer than any gap a loaded machine (-race, other processes on the
// cores) adds to a healthy stream: 200 ms was not.
const stallIdleTimeout = 3 * time.Second

// TestRunFaults injects each simulator fault into every request and checks
// the error class, that every request is accounted for and that the run goes
// on to the end.
func TestRunFaults(t *testing.T) {
	t.Parallel()
	all := 1.0
	for _, tc := range []struct {
		name     string
		scenario string
		kind     string
		faults   simulator.Faults
		idle     time.Duration // client idle timeout; 0: the default of baseConfig
		class    string        // "" = the requests succeed
		status   int           // Record.Status of the failures
		midBody  bool          // the server fails the request after its 200: it counts an abort
	}{
		{"500/chat", "chat-voice", "", simulator.Faults{HTTP500: all}, 0, results.ErrHTTPStatus, 500, false},
		{"500/speech", "tts-long", "", simulator.Faults{HTTP500: all}, 0, results.ErrHTTPStatus, 500, false},
		{"disconnect/chat", "chat-voice", "", simulator.Faults{Disconnect: all}, 0, results.ErrTruncated, 200, true},
		{"disconnect/speech", "tts-long", "", simulator.Faults{Disconnect: all}, 0, results.ErrTruncated, 200, true},
		{"disconnect/speech-sse", "tts-short", "", simulator.Faults{Disconnect: all}, 0, results.ErrTruncated, 200, true},
		{"error-event/chat", "chat-voice", "", simulator.Faults{ErrorEvent: all}, 0, results.ErrStreamError, 200, true},
		{"error-event/speech-sse", "tts-short", "", simulator.Faults{ErrorEvent: all}, 0, results.ErrStreamError, 200, true},
		// A raw byte stream cannot carry an error: the server drops the connection.
		{"error-event/speech", "tts-long", "", simulator.Faults{ErrorEvent: all}, 0, results.ErrTruncated, 200, true},
		{"stall/chat", "chat-voice", "", simulator.Faults{Stall: all}, stallIdleTimeout, results.ErrIdleTimeout, 200, false},
		{"stall/speech", "tts-long", "", simulator.Faults{Stall: all}, stallIdleTimeout, results.ErrIdleTimeout, 200, false},
		{"bad-base64/chat", "chat-voice", "", simulator.Faults{MalformedBase64: all}, 0, results.ErrMalformed, 200, false},
		{"bad-base64/speech-sse", "tts-short", "", simulator.Faults{MalformedBase64: all}, 0, results.ErrMalformed, 200, false},
		// The server finishes a response without audio normally; the
		// client fails it because it asked for audio.
		{"empty-audio/chat", "chat-voice", "", simulator.Faults{EmptyAudio: all}, 0, results.ErrNoAudio, 200, false},
		{"empty-audio/speech-sse", "tts-short", "", simulator.Faults{EmptyAudio: all}, 0, results.ErrNoAudio, 200, false},
		{"oversized/chat", "chat-voice", "", simulator.Faults{Oversized: all}, 0, "", 200, false},
		{"oversized/speech-sse", "tts-short", "", simulator.Faults{Oversized: all}, 0, "", 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wl := workload(t, tc.scenario, tc.kind, "")
			sim := startSim(t, wl, func(c *simulator.Config) {
				c.Faults = tc.faults
				// The stall outlasts every run (runGuard): it ends when
				// the client leaves, so the idle timeout is not raced
				// against its length.
				c.Faults.StallFor = 10 * runGuard
			})
			const n = 4
			cfg := baseConfig(sim.URL, wl, n, 2)
			if tc.idle > 0 {
				// Every stalled request waits the whole idle timeout: one
				// round of them, all at once.
				cfg = baseConfig(sim.URL, wl, n, n)
				cfg.Client.IdleTimeout = tc.idle
			}
			out := mustRun(t, cfg)

			s := out.Summary.Requests
			if len(out.Records) != n || s.Total != n || s.Completed+s.Failed != n || out.Load.Completed != n {
				t.Fatalf("%d records, summary %+v, load %+v: every request must be accounted for", len(out.Records), s, out.Load)
			}
			for i := range out.Records {
				r := &out.Records[i]
				if r.ErrorClass != tc.class || r.Status != tc.status {
					t.Errorf("seq %d: class %q status %d (%s), want class %q status %d", r.Seq, r.ErrorClass, r.Status, r.Error, tc.class, tc.status)
				}
				if tc.class != "" && r.Error == "" {
					t.Errorf("seq %d: class %q without a message", r.Seq, r.ErrorClass)
				}
			}
			rows := out.ServerVsClient()
			if tc.class == "" {
				if s.Completed != n || len(s.ByError) != 0 {
					t.Errorf("summary requests %+v, want all %d completed", s, n)
				}
				wantAgree(t, rows, "requests completed", n)
			} else {
				if s.Failed != n || s.ByError[tc.class] != n || len(s.ByError) != 1 {
					t.Errorf("summary by error %v (failed %d), want %s: %d", s.ByError, s.Failed, tc.class, n)
				}
				if tc.class == results.ErrHTTPStatus && s.ByStatus["500"] != n {
					t.Errorf("summary by status %v, want 500: %d", s.ByStatus, n)
				}
				switch tc.class {
				case results.ErrNoAudio:
					// The server counts a success, as the client's
					// server-side figures do (Record.Delivered).
					wantAgree(t, rows, "requests completed", n)
				case results.ErrMalformed:
					// The server sent every event and counts a success;
					// only the client could not decode one. The
					// comparison shows exactly that difference.
					wantSides(t, rows, "requests completed", n, 0)
					wantSides(t, rows, "requests aborted", 0, n)
				default:
					wantAgree(t, rows, "requests completed", 0)
				}
				if tc.midBody {
					// The server records the failure before the client
					// can see it, so both sides agree exactly.
					wantAgree(t, rows, "requests aborted", n)
				}
			}
			switch tc.name {
			case "empty-audio/chat", "empty-audio/speech-sse":
				for i := range out.Records {
					r := &out.Records[i]
					if r.HasAudio() || (r.Kind == results.KindChat && (r.TTFTS <= 0 || r.Error != "text only")) {
						t.Errorf("seq %d: %d audio bytes, TTFT %v, error %q: want text only", r.Seq, r.AudioBytes, r.TTFTS, r.Error)
					}
				}
				if s.WithAudio != 0 {
					t.Errorf("summary: %d responses with audio", s.WithAudio)
				}
				wantAgree(t, rows, "requests without audio (skipped)", n)
				if got := counter(t, out, "audio_skipped_requests_total", nil); got != n {
					t.Errorf("server skipped %v requests, want %d", got, n)
				}
			case "oversized/chat", "oversized/speech-sse":
				// One event carries about 300 KiB of base64, far beyond
				// a 64 KiB line limit: it must parse like any other.
				for i := range out.Records {
					r := &out.Records[i]
					if m := slices.Max(r.ChunkBytes); m <= 64<<10 {
						t.Errorf("seq %d: the largest chunk has %d bytes, want > 64 KiB", r.Seq, m)
					}
				}
				wantAgree(t, rows, "audio frames", float64(sumFrames(out.Records)))
			}
		})
	}
}

// TestRunFaultFractionContinues mixes successes and failures: half the
// requests hit a mid-stream fault, and the run still sends them all.
func TestRunFaultFractionContinues(t *testing.T) {
	t.Parallel()
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, func(c *simulator.Config) { c.Faults = simulator.Faults{ErrorEvent: 0.5} })
	const n = 12
	out := mustRun(t, baseConfig(sim.URL, wl, n, 3))
	s := out.Summary.Requests
	if s.Total != n || s.Completed+s.ByError[results.ErrStreamError] != n {
		t.Errorf("summary requests %+v, want %d split between completed and stream_error", s, n)
	}
	if s.Completed == 0 || s.Failed == 0 {
		t.Errorf("summary requests %+v: the seeded fraction should give both outcomes", s)
	}
	rows := out.ServerVsClient()
	wantAgree(t, rows, "requests completed", float64(s.Completed))
	wantAgree(t, rows, "requests aborted", float64(s.Failed))
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, func(c *simulator.Config) { c.Faults = simulator.Faults{Stall: 1, StallFor: 10 * time.Second} })
	cfg := baseConfig(sim.URL, wl, 2, 2)
	cfg.Client.Timeout, cfg.Client.IdleTimeout = 300*time.Millisecond, 0
	cfg.Scrape = ScrapeOff
	out := mustRun(t, cfg)
	if got := out.Summary.Requests.ByError[results.ErrTimeout]; got != 2 {
		t.Errorf("summary by error %v, want timeout: 2", out.Summary.Requests.ByError)
	}
}

func TestRunWarmupExcluded(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 5, 2)
	cfg.Load.Warmup = 2
	out := mustRun(t, cfg)

	if len(out.Records) != 7 {
		t.Fatalf("%d records, want 5 measured + 2 warm-up", len(out.Records))
	}
	var warm []int
	for _, r := range out.Records {
		if r.Warmup {
			warm = append(warm, r.Seq)
		}
	}
	slices.Sort(warm)
	if !slices.Equal(warm, []int{0, 1}) {
		t.Errorf("warm-up sequence numbers %v, want [0 1]", warm)
	}
	s := out.Summary.Requests
	if s.Total != 5 || s.Completed != 5 || s.Warmup != 2 {
		t.Errorf("summary requests %+v, want 5 measured and 2 warm-up", s)
	}
	if out.Load.Started != 5 || out.Load.WarmupStarted != 2 {
		t.Errorf("load started %d, warm-up %d", out.Load.Started, out.Load.WarmupStarted)
	}
	// The server counted the warm-up too, and so does the comparison.
	wantAgree(t, out.ServerVsClient(), "requests completed", 7)
	wantAgree(t, out.ServerVsClient(), "TTFP observations", 7)
	if got := counter(t, out, "requests_success_total", nil); got != 7 {
		t.Errorf("server requests_success_total rose by %v, want 7", got)
	}
}

// TestRunDurationStop bounds a closed loop by time alone: the run must end
// on its own (runGuard would otherwise cut it off as interrupted).
func TestRunDurationStop(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 0, 2)
	cfg.Load.Duration = 300 * time.Millisecond
	cfg.Scrape = ScrapeOff
	out := mustRun(t, cfg)
	if len(out.Records) == 0 || out.Load.Started != len(out.Records) || out.Load.Planned != 0 {
		t.Errorf("%d records, load %+v", len(out.Records), out.Load)
	}
	if out.Load.Completed != out.Load.Started || out.Summary.Requests.Completed != out.Load.Started {
		t.Errorf("load %+v, summary %+v: every started request completes", out.Load, out.Summary.Requests)
	}
}

// TestRunInterrupted cancels the run's context once three requests have
// finished: Run returns what it gathered with context.Canceled, and every
// started request has a record.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := baseConfig(sim.URL, wl, 10_000, 2)
	var done atomic.Int64
	cfg.OnRecord = func(*results.Record) {
		if done.Add(1) == 3 {
			cancel()
		}
	}
	out, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if out == nil || !out.Interrupted || !out.Load.Interrupted {
		t.Fatalf("outcome %+v: want an interrupted outcome", out)
	}
	if n := out.Set.Len(); n < 3 || n != out.Load.Started || out.Summary.Requests.Total != n {
		t.Errorf("%d requests, load %+v, summary %+v", n, out.Load, out.Summary.Requests)
	}
	if !out.Document().Interrupted {
		t.Error("the document does not say the run was interrupted")
	}
	if out.After != nil || out.Delta != nil {
		t.Error("an interrupted run skips the second scrape")
	}
}

// perSeq is what a run produced for each sequence number: the audio and
// text the simulator generated and the intended start.
type perSeq struct {
	frames   int64
	chunks   string
	text     int
	intended float64
}

func bySeq(out *ran) map[int]perSeq {
	m := make(map[int]perSeq, len(out.Records))
	for _, r := range out.Records {
		m[r.Seq] = perSeq{frames: r.AudioFrames, chunks: fmt.Sprint(r.ChunkBytes), text: r.TextChars, intended: r.IntendedS}
	}
	return m
}

// TestRunReproducible runs the same open-loop workload twice with the same
// seed against fresh simulators with the same seed: each sequence number
// gets the same prompt (hence the same audio, chunk by chunk, and text) and
// the same intended start. Another seed changes both.
func TestRunReproducible(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	run := func(seed int64) map[int]perSeq {
		sim := startSim(t, wl, nil)
		cfg := baseConfig(sim.URL, wl, 8, 0)
		cfg.Seed, cfg.Load.Seed = seed, seed
		cfg.Load.Rate, cfg.Load.Arrival = 200, load.Poisson
		cfg.Scrape = ScrapeOff
		out := mustRun(t, cfg)
		if out.Summary.Requests.Completed != 8 {
			t.Fatalf("seed %d: summary requests %+v", seed, out.Summary.Requests)
		}
		return bySeq(out)
	}
	a, b, c := run(11), run(11), run(12)
	for seq, x := range a {
		if y := b[seq]; x != y {
			t.Errorf("seed 11, seq %d: first run %+v, second %+v", seq, x, y)
		}
	}
	sameAudio, sameIntended := true, true
	for seq, x := range a {
		y := c[seq]
		sameAudio = sameAudio && x.chunks == y.chunks
		sameIntended = sameIntended && x.intended == y.intended
	}
	if sameAudio || sameIntended {
		t.Errorf("seeds 11 and 12 give the same audio (%v) or the same schedule (%v)", sameAudio, sameIntended)
	}
}

// TestRunClosesIdleConnections checks that Run leaves no keep-alive
// connection open to the target once it returns: a sweep calls Run once per
// level, and each run's idle connections would otherwise stay open for the
// transport's 90 s idle timeout.
func TestRunClosesIdleConnections(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	simCfg := e2eSimConfig()
	simCfg.Model = wl.Scenario().Model
	srv, err := simulator.New(simCfg)
	if err != nil {
		t.Fatal(err)
	}
	var open atomic.Int64
	changed := make(chan struct{}, 1) // a connection opened or closed
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	hs.Start()
	defer hs.Close()

	cfg := baseConfig(hs.URL, wl, 4, 2)
	cfg.Scrape = ScrapeOff
	mustRun(t, cfg)
	// The server sees the client's close asynchronously: wait for each
	// change, under a hang guard (not a timing assertion).
	guard := time.NewTimer(runGuard)
	defer guard.Stop()
	for open.Load() != 0 {
		select {
		case <-changed:
		case <-guard.C:
			t.Fatalf("%d connections still open %s after Run returned", open.Load(), runGuard)
		}
	}
}

// TestRecordConsumerDoesNotHoldTheLoad: a closed-loop worker starts its
// next request as soon as its record is complete, whatever the record's
// consumers take. OnRecord here waits until every request has started,
// which a worker that delivered records itself could never see: the run
// would sit out the wait on every record instead.
func TestRecordConsumerDoesNotHoldTheLoad(t *testing.T) {
	t.Parallel()
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	const n = 6
	var started atomic.Int64
	allStarted := make(chan struct{})
	var waitedOut atomic.Int64
	cfg := baseConfig(sim.URL, wl, n, 2)
	cfg.Scrape = ScrapeOff
	cfg.OnStart = func(load.Arrival) {
		if started.Add(1) == n {
			close(allStarted)
		}
	}
	cfg.OnRecord = func(*results.Record) {
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		select {
		case <-allStarted:
		case <-t.C:
			waitedOut.Add(1)
		}
	}
	out := mustRun(t, cfg)
	if got := len(out.Records); got != n {
		t.Fatalf("%d records, want %d", got, n)
	}
	if w := waitedOut.Load(); w > 0 {
		t.Errorf("%d records' consumer waited 10 s for requests that their workers had not started: the consumer held the load", w)
	}
}
