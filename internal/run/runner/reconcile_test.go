package runner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// TestServerVsClientRTFAndDuration checks the rows where the server's own
// figures become known only through /metrics: its RTF (generation time /
// duration) must be the simulator's configured RTF, since no jitter, stall
// or overload is configured, and the mean audio duration must be the same on
// both sides (frames / sample rate).
func TestServerVsClientRTFAndDuration(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, func(c *simulator.Config) { c.Timing.Jitter = 0 })
	out := mustRun(t, baseConfig(sim.URL, wl, 4, 2))
	rows := out.ServerVsClient()

	rtf := row(t, rows, "RTF mean")
	if rtf.Server == nil || math.Abs(*rtf.Server-e2eTiming().RTF) > 1e-6 {
		t.Errorf("server RTF = %v, want the configured %v", fp(rtf.Server), e2eTiming().RTF)
	}
	if rtf.Client == nil || *rtf.Client <= 0 {
		t.Errorf("client RTF = %v, want > 0", fp(rtf.Client))
	}

	dur := row(t, rows, "audio duration mean")
	if dur.Server == nil || dur.Client == nil || math.Abs(*dur.Server-*dur.Client) > 1e-9 {
		t.Errorf("audio duration mean: server %v, client %v: want equal", fp(dur.Server), fp(dur.Client))
	}
}

// TestServerVsClientSpeechStreams reconciles streaming speech runs (raw,
// SSE, WebSocket) with a simulator of each server age. A current server
// records one TTFP, underrun and completed-stream count per speech stream,
// and the rows agree. An older one records none: the comparison must say
// so instead of setting its zero beside a zero of chat streams, and must
// compare no continuity.
func TestServerVsClientSpeechStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario, kind string
		ws                   WSOptions
	}{
		{"raw", "tts-short", results.KindSpeech, WSOptions{}},
		{"sse", "tts-short", results.KindSpeechSSE, WSOptions{}},
		{"ws", "tts-short", results.KindSpeechWS, WSOptions{Turns: 2}},
	} {
		for _, old := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/old=%v", tc.name, old), func(t *testing.T) {
				t.Parallel()
				wl := workload(t, tc.scenario, tc.kind, "")
				sim := startSim(t, wl, func(c *simulator.Config) { c.NoSpeechStreamMetrics = old })
				cfg := baseConfig(sim.URL, wl, 3, 2)
				cfg.WS = tc.ws
				out := mustRun(t, cfg)
				n := float64(len(out.Records))
				for _, r := range out.Records {
					if !r.OK() || !r.HasAudio() {
						t.Fatalf("record %s: %s %s, audio %v", r.ID, r.ErrorClass, r.Error, r.HasAudio())
					}
				}
				rows := out.ServerVsClient()
				if old {
					wantSpeechNotRecorded(t, rows, n)
					return
				}
				wantAgree(t, rows, "TTFP observations", n)
				wantAgree(t, rows, "speech streams completed", n)
				if r := row(t, rows, "continuity OK (100 ms)"); r.Server == nil || r.Client == nil {
					t.Errorf("continuity OK: server %v, client %v: want both sides", fp(r.Server), fp(r.Client))
				}
				if got := histCount(t, out, "audio_underrun_s"); got != n {
					t.Errorf("audio_underrun_s counted %v streams, want %v", got, n)
				}
			})
		}
	}
}

// wantSpeechNotRecorded checks the rows of a speech-only run against a
// server that does not record speech streams: no TTFP or continuity row
// (zero beside zero would read as a match), and a row that says the n
// speech streams are not recorded.
func wantSpeechNotRecorded(t *testing.T, rows []report.Comparison, n float64) {
	t.Helper()
	for _, r := range rows {
		if r.Figure == "TTFP observations" || strings.HasPrefix(r.Figure, "continuity OK") {
			t.Errorf("row %q (server %v, client %v) compares what the server does not record", r.Figure, fp(r.Server), fp(r.Client))
		}
	}
	r := row(t, rows, "speech streams in the audio families")
	if r.Server != nil || r.Client == nil || *r.Client != n || !strings.Contains(r.Note, "does not record speech streams") {
		t.Errorf("speech streams row: server %v, client %v, note %q: want no server value, %v streams, and why", fp(r.Server), fp(r.Client), r.Note, n)
	}
}

// histCount is the number of observations a server histogram family gained
// over the run.
func histCount(t *testing.T, out *ran, family string) float64 {
	t.Helper()
	h, ok := out.Delta.HistogramDelta(family, nil)
	if !ok {
		t.Fatalf("no %s in the /metrics delta", family)
	}
	return h.Count
}

// TestServerVsClientQuantileBuckets sets the client's TTFP quantiles of a
// real run beside a server histogram built around them. With one bucket
// from 0 to 10 s, the server's interpolated p50 is 5 s while the client's
// is a fraction of a second: the buckets cannot tell them apart, so the row
// shows the bucket and no difference. With every observation in a bucket
// below 1 ms, the client's value lies outside it and the row shows the
// difference.
func TestServerVsClientQuantileBuckets(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	out := mustRun(t, baseConfig(sim.URL, wl, 4, 2))
	n := len(out.Records)
	for _, tc := range []struct {
		name     string
		le       string // the bound of the one finite bucket, s
		inBucket bool
	}{
		{"wide bucket", "10", true},
		{"bucket below the client", "0.001", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Delta = ttfpDelta(t, tc.le, n)
			out.After = nil
			for _, figure := range []string{"TTFP p50", "TTFP p95"} {
				r := row(t, out.ServerVsClient(), figure)
				if r.Server == nil || r.Client == nil || r.ServerBucket == nil || r.ServerBucket.High == nil {
					t.Fatalf("%s: server %v, client %v, bucket %+v: want both sides and the bucket", figure, fp(r.Server), fp(r.Client), r.ServerBucket)
				}
				if high := *r.ServerBucket.High; high != 1000*mustFloat(t, tc.le) {
					t.Errorf("%s: bucket upper bound %v ms, want %s s", figure, high, tc.le)
				}
				if got := r.Diff == nil; got != tc.inBucket {
					t.Errorf("%s: server %v (bucket %v), client %v: diff %v, want a difference only outside the bucket",
						figure, *r.Server, r.ServerBucket, *r.Client, fp(r.Diff))
				}
			}
		})
	}
}

// ttfpDelta is a /metrics delta in which n TTFP observations, all made
// between the scrapes, fall in one bucket with upper bound le seconds.
func ttfpDelta(t *testing.T, le string, n int) *scrape.Delta {
	t.Helper()
	parse := func(count int) scrape.Families {
		body := fmt.Sprintf("# TYPE vllm:omni_audio_ttfp_s histogram\n"+
			"vllm:omni_audio_ttfp_s_bucket{le=%q} %d\nvllm:omni_audio_ttfp_s_bucket{le=\"+Inf\"} %d\n"+
			"vllm:omni_audio_ttfp_s_sum 0\nvllm:omni_audio_ttfp_s_count %d\n", le, count, count, count)
		fams, err := scrape.Parse("text/plain; version=0.0.4", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	return scrape.Diff(parse(0), parse(n))
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestServerVsClientShard checks that shard 0 of two, whose server delta
// counts the other shard's requests too, sets no count beside its own, says
// where to compare them, and keeps the distributions.
func TestServerVsClientShard(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 4, 2)
	cfg.Load.Shard = load.Shard{Index: 0, Count: 2}
	out := mustRun(t, cfg)
	rows := out.ServerVsClient()
	for _, r := range rows {
		if r.Figure == "requests completed" || r.Figure == "audio frames" || strings.HasSuffix(r.Figure, "observations") || strings.HasPrefix(r.Figure, "continuity OK") {
			t.Errorf("shard compares the count %q (server %v, client %v), which includes the other shard", r.Figure, fp(r.Server), fp(r.Client))
		}
	}
	note := row(t, rows, "counts (requests, frames, observations)")
	if !strings.Contains(note.Note, "include the other shards") || !strings.Contains(note.Note, "merge") {
		t.Errorf("counts row note %q: want it to say the server counts include the other shards, and to compare after merge", note.Note)
	}
	if r := row(t, rows, "TTFP p95"); r.Server == nil || !strings.Contains(r.Note, "all 2 shards") {
		t.Errorf("TTFP p95: server %v, note %q: want the server's figure, noted as all shards'", fp(r.Server), r.Note)
	}
}
