package summary

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

func approx(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", name, got, want)
	}
}

// fixture: three measured chat requests with audio, one failed speech request
// and one warm-up request. Figures chosen so every value is easy by hand.
func fixture() []results.Record {
	cont := func(under float64, ok bool, stalls int, stall float64) *results.Continuity {
		return &results.Continuity{Mode: "default", MaxUnderrunS: under, OK: map[string]bool{"100": ok},
			StallResume: &results.PlayerResult{Stalls: stalls, TotalStallS: stall, LongestStallS: stall},
			Preroll:     &results.PlayerResult{StartupDelayS: 0.2}}
	}
	return []results.Record{
		{Seq: 0, Warmup: true, Kind: results.KindChat, E2ES: 9, AudioBytes: 1},
		{Seq: 1, Kind: results.KindChat, SentS: 0, E2ES: 1.0, TTFPS: 0.1, TTFTS: 0.05, LagS: 0.01,
			AudioBytes: 96000, AudioFrames: 48000, AudioDurationS: 2, RTFLastChunk: 0.45, RTFE2E: 0.5,
			FinishReason: "stop", Continuity: cont(0, true, 0, 0)},
		{Seq: 2, Kind: results.KindChat, SentS: 1, E2ES: 2.0, TTFPS: 0.2, TTFTS: 0.06, LagS: 0.02,
			AudioBytes: 96000, AudioFrames: 48000, AudioDurationS: 2, RTFLastChunk: 0.9, RTFE2E: 1.0,
			FinishReason: "stop", Continuity: cont(0.3, false, 2, 0.5)},
		{Seq: 3, Kind: results.KindChat, SentS: 2, E2ES: 3.0, TTFPS: 0.3, TTFTS: 0.07, LagS: 0.03,
			AudioBytes: 48000, AudioFrames: 24000, AudioDurationS: 1, RTFLastChunk: 2.5, RTFE2E: 3.0,
			FinishReason: "length", Continuity: cont(0.1, true, 1, 0.1)},
		{Seq: 4, Kind: results.KindSpeech, SentS: 3, E2ES: 0.5, ErrorClass: results.ErrHTTPStatus, Status: 500},
	}
}

func TestComputeHandChecked(t *testing.T) {
	s := Compute(fixture(), Options{Percentiles: []float64{50, 90}})
	r := s.Requests
	if r.Total != 4 || r.Completed != 3 || r.Failed != 1 || r.Warmup != 1 || r.WithAudio != 3 || r.ChatWithAudio != 3 {
		t.Fatalf("requests = %+v", r)
	}
	if r.ByError[results.ErrHTTPStatus] != 1 || r.ByStatus["500"] != 1 || r.ByFinish["stop"] != 2 || r.ByFinish["length"] != 1 {
		t.Fatalf("breakdown = %+v", r)
	}
	// Wall time: first send 0, last end max(0+1, 1+2, 2+3, 3+0.5) = 5.
	approx(t, "duration", s.DurationS, 5)
	approx(t, "request rate", s.RequestRate, 3.0/5)
	approx(t, "audio total", s.Audio.TotalDurationS, 5)
	approx(t, "audio throughput", s.Audio.Throughput, 1)
	if s.Audio.TotalFrames != 120000 {
		t.Errorf("frames = %d", s.Audio.TotalFrames)
	}
	ttfp, _ := s.Metric(MetricTTFP)
	approx(t, "ttfp mean", ttfp.Mean, 200)
	approx(t, "ttfp median", ttfp.Median, 200)
	// p90 of [100,200,300] by linear interpolation: h = 2*0.9 = 1.8 -> 200 + 0.8*100 = 280.
	p90, _ := ttfp.Percentile(90)
	approx(t, "ttfp p90", p90, 280)
	approx(t, "ttfp std", ttfp.Std, 100)
	// The benchmark's audio RTF for chat is the last-chunk definition.
	artf, _ := s.Metric(MetricAudioRTF)
	approx(t, "audio_rtf mean", artf.Mean, (0.45+0.9+2.5)/3)
	// Continuity at 100 ms: requests 1 and 3 (0.1 is inclusive) of 3.
	if len(s.Continuity) != 1 || s.Continuity[0].OK != 2 || s.Continuity[0].Of != 3 {
		t.Fatalf("continuity = %+v", s.Continuity)
	}
	approx(t, "continuity rate", s.Continuity[0].Rate, 2.0/3)
	if p := s.Players; p.StallResumeStalled != 2 || p.StallResumeStalls != 3 || p.Responses != 3 {
		t.Errorf("players = %+v", p)
	}
	approx(t, "stall total", s.Players.StallResumeTotalS, 0.6)
	approx(t, "longest stall", s.Players.StallResumeLongestS, 0.5)
	approx(t, "preroll startup mean", s.Players.PrerollStartupMeanS, 0.2)
}

func TestComputeFromIntendedAddsLag(t *testing.T) {
	recs := fixture()
	for i := range recs {
		recs[i].LatencyOrigin = results.OriginIntended
	}
	s := Compute(recs, Options{})
	if !s.FromIntended || s.LatencyOrigin != results.OriginIntended {
		t.Errorf("origin %q, from intended %v; want intended", s.LatencyOrigin, s.FromIntended)
	}
	e2e, _ := s.Metric(MetricE2E)
	// (1.01 + 2.02 + 3.03) / 3 s = 2.02 s.
	approx(t, "e2e mean from intended", e2e.Mean, 2020)
	lag, _ := s.Metric(MetricLag)
	approx(t, "lag mean", lag.Mean, (10+20+30+0)/4.0)
}

// The same responses sent 1 s late: measured from the intended start their
// TTFP, TTFT and e2e are 1 s (1000 ms) higher; measured from the send they
// are not, and the summary says which origin it used.
func TestComputeSchedulingLagRaisesLatencyFromIntended(t *testing.T) {
	onTime := fixture()
	late := fixture()
	for i := range late {
		late[i].LagS = 1
		late[i].SentS += 1
		late[i].LatencyOrigin = results.OriginIntended
		onTime[i].LagS = 0
		onTime[i].LatencyOrigin = results.OriginIntended
	}
	a, b := Compute(onTime, Options{}), Compute(late, Options{})
	for _, name := range []string{MetricTTFP, MetricTTFT, MetricE2E} {
		ma, _ := a.Metric(name)
		mb, _ := b.Metric(name)
		approx(t, name+" mean, 1 s late minus on time", mb.Mean-ma.Mean, 1000)
		approx(t, name+" p50, 1 s late minus on time", mb.Median-ma.Median, 1000)
	}
	// TTFP means by hand: (0.1+0.2+0.3)/3 s = 200 ms on time, 1200 ms late.
	ttfp, _ := b.Metric(MetricTTFP)
	approx(t, "late ttfp mean", ttfp.Mean, 1200)

	sent := fixture()
	for i := range sent {
		sent[i].LagS = 1
		sent[i].LatencyOrigin = results.OriginSend
	}
	s := Compute(sent, Options{})
	ttfp, _ = s.Metric(MetricTTFP)
	approx(t, "send-relative ttfp mean ignores the lag", ttfp.Mean, 200)
	if s.FromIntended || s.LatencyOrigin != results.OriginSend {
		t.Errorf("origin %q, from intended %v; want send", s.LatencyOrigin, s.FromIntended)
	}
	g, _ := ParseGoodput("ttfp:500ms")
	if got := Compute(late, Options{Goodput: g}).Goodput.Good; got != 0 {
		t.Errorf("goodput ttfp<=500ms with 1 s lag counts %d good; the lag must count", got)
	}
	if got := Compute(onTime, Options{Goodput: g}).Goodput.Good; got != 3 {
		t.Errorf("goodput ttfp<=500ms on time counts %d good, want 3", got)
	}
}

func TestComputeMixedOrigins(t *testing.T) {
	recs := fixture()
	recs[1].LatencyOrigin = results.OriginIntended
	if s := Compute(recs, Options{}); s.LatencyOrigin != OriginMixed || s.FromIntended {
		t.Errorf("origin %q, from intended %v; want mixed, false", s.LatencyOrigin, s.FromIntended)
	}
}

func TestBenchKeys(t *testing.T) {
	s := Compute(fixture(), Options{Percentiles: []float64{99}})
	b := s.Bench()
	approx(t, "mean_audio_ttfp_ms", b["mean_audio_ttfp_ms"], 200)
	// p99 of [100,200,300]: h = 1.98 -> 200 + 0.98*100 = 298.
	approx(t, "p99_audio_ttfp_ms", b["p99_audio_ttfp_ms"], 298)
	approx(t, "audio_throughput", b["audio_throughput"], 1)
	// The benchmark does not measure chat continuity: every chat response is continuous.
	approx(t, "audio_continuity_ok_rate", b["audio_continuity_ok_rate"], 1)
	approx(t, "completed", b["completed"], 3)
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("summary does not marshal: %v", err)
	}
}

func TestGoodput(t *testing.T) {
	slos, err := ParseGoodput("ttfp:250ms,e2e:2500")
	if err != nil {
		t.Fatal(err)
	}
	approx(t, "e2e limit", slos[1].Limit, 2.5)
	s := Compute(fixture(), Options{Goodput: slos})
	// Request 1 (ttfp 0.1, e2e 1) and 2 (0.2, 2) are good; 3 fails ttfp; 4 failed.
	if g := s.Goodput; g.Good != 2 || g.Of != 4 {
		t.Fatalf("goodput = %+v", g)
	}
	approx(t, "goodput rate", s.Goodput.Rate, 2.0/5)
	for _, bad := range []string{"ttfp", "foo:1s", "ttfp:-1ms", "rtf:fast", ""} {
		if _, err := ParseGoodput(bad); err == nil {
			t.Errorf("ParseGoodput(%q) accepted", bad)
		} else if bad != "" && !strings.Contains(err.Error(), "goodput") {
			t.Errorf("error %v does not name goodput", err)
		}
	}
}

func TestComputeEmpty(t *testing.T) {
	s := Compute(nil, Options{})
	if s.Requests.Total != 0 || len(s.Metrics) != 0 || s.DurationS != 0 {
		t.Fatalf("empty summary = %+v", s)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}
