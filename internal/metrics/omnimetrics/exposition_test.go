package omnimetrics

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// decodeAll decodes a scraped body by its Content-Type, keeping families
// without metrics (the protobuf decoder does; the text parsers do not).
func decodeAll(t *testing.T, hdr http.Header, body []byte) []*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.ResponseFormat(hdr))
	var out []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode %s body: %v", hdr.Get("Content-Type"), err)
		}
		out = append(out, mf)
	}
}

// TestHandlerFormatsStatsOff: in the bare stats-off shape of the original
// metrics design (docs/reference/metric-families.md, section 2.1), every negotiated format carries the HELP/TYPE of every pipeline
// family and no samples. The current shape is TestGoldenStatsOff's.
func TestHandlerFormatsStatsOff(t *testing.T) {
	m := newTestMetrics(t, Options{ModelName: testModel, BareStatsOff: true})
	h := m.Handler()
	specs := PipelineFamilies()

	t.Run("protobuf", func(t *testing.T) {
		hdr, body := scrape(t, h, string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
		if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
			t.Fatalf("Content-Type %q, want protobuf", ct)
		}
		mfs := decodeAll(t, hdr, body)
		if len(mfs) != len(specs) {
			t.Fatalf("%d families, want %d", len(mfs), len(specs))
		}
		byName := map[string]*dto.MetricFamily{}
		for _, mf := range mfs {
			byName[mf.GetName()] = mf
			if len(mf.GetMetric()) != 0 {
				t.Errorf("%s has %d metrics with stats off", mf.GetName(), len(mf.GetMetric()))
			}
		}
		for _, s := range specs {
			mf := byName[PrefixDesign+s.Name]
			if mf == nil {
				t.Errorf("%s%s missing", PrefixDesign, s.Name)
				continue
			}
			if mf.GetHelp() != s.Help || !strings.EqualFold(mf.GetType().String(), s.Type) {
				t.Errorf("%s: help %q type %v, want %q %s", mf.GetName(), mf.GetHelp(), mf.GetType(), s.Help, s.Type)
			}
		}
	})

	t.Run("openmetrics", func(t *testing.T) {
		hdr, body := scrape(t, h, "application/openmetrics-text;version=1.0.0")
		if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Fatalf("Content-Type %q, want OpenMetrics", ct)
		}
		text := string(body)
		for _, want := range []string{
			"# TYPE vllm:omni_audio_ttfp_s histogram\n",
			"# TYPE vllm:omni_audio_frames counter\n", // OpenMetrics drops _total from the family name
			"# EOF\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("OpenMetrics body lacks %q:\n%s", want, text)
			}
		}
		if n := strings.Count(text, "# TYPE "); n != len(specs) {
			t.Errorf("%d TYPE lines, want %d", n, len(specs))
		}
		if n := strings.Count(text, "\n"); n != 2*len(specs)+1 {
			t.Errorf("%d lines, want %d (HELP+TYPE per family and # EOF)", n, 2*len(specs)+1)
		}
	})

	t.Run("text default", func(t *testing.T) {
		hdr, body := scrape(t, h, "")
		if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("Content-Type %q, want text/plain", ct)
		}
		if n := strings.Count(string(body), "\n"); n != 2*len(specs) {
			t.Errorf("%d lines, want %d", n, 2*len(specs))
		}
	})

	t.Run("name filter", func(t *testing.T) {
		_, body := scrape(t, h, "text/plain")
		_, filtered := scrapePath(t, h, "/metrics?name[]=vllm:omni_audio_rtf", "")
		want := "# HELP vllm:omni_audio_rtf Real-time factor stage_gen_time_s / audio_duration_s (SLO < 1); uses RTF_BUCKETS\n" +
			"# TYPE vllm:omni_audio_rtf histogram\n"
		if string(filtered) != want || !strings.Contains(string(body), want) {
			t.Errorf("name[] filter gave %q", filtered)
		}
	})
}

// TestHandlerTextParses: the stats-on text exposition, HELP/TYPE-only
// families included, parses with the Prometheus text parser and agrees with
// the protobuf exposition.
func TestHandlerTextParses(t *testing.T) {
	opts := serverOpts(PrefixCurrent)
	opts.Upstream = true
	opts.Topology = []int{1, 1, 1}
	m := newTestMetrics(t, opts)
	m.AudioFirstPacket(StageReplica{Stage: 2}, 0.125) // one audio family with a child, the rest HELP/TYPE only
	h := m.Handler()

	_, text := scrape(t, h, "text/plain;version=0.0.4")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("text exposition does not parse: %v\n%s", err, text)
	}
	hdr, pb := scrape(t, h, string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	withSamples := 0
	for _, mf := range decodeAll(t, hdr, pb) {
		if len(mf.GetMetric()) == 0 {
			if !bytes.Contains(text, []byte("# TYPE "+mf.GetName()+" ")) {
				t.Errorf("text lacks TYPE of empty family %s", mf.GetName())
			}
			continue
		}
		withSamples++
		p, ok := parsed[mf.GetName()]
		if !ok || len(p.GetMetric()) != len(mf.GetMetric()) {
			t.Errorf("%s: text has %d series, protobuf %d", mf.GetName(), len(p.GetMetric()), len(mf.GetMetric()))
		}
	}
	if withSamples != len(parsed) {
		t.Errorf("text parsed %d families with samples, protobuf has %d", len(parsed), withSamples)
	}
}

// TestLineCounts reports the text exposition size with stats on and off for
// topology [1,1,1], like the original metrics design's 1358 vs 124 lines
// (docs/reference/metric-families.md, section 7).
func TestLineCounts(t *testing.T) {
	lines := func(opts Options, observe bool) int {
		m := newTestMetrics(t, opts)
		if observe {
			scenario(m)
			if u := m.Upstream(); u != nil {
				for s := range 3 {
					u.ObserveRequest(StageReplica{Stage: s}, 0.1, 1, 0.01, 0.09, 0.9, 10, 10, []float64{0.1}, "stop")
				}
			}
		}
		_, body := scrape(t, m.Handler(), "text/plain")
		return bytes.Count(body, []byte("\n"))
	}
	on := Options{ModelName: testModel, StatsEnabled: true, Upstream: true, Topology: []int{1, 1, 1}}
	off := on
	off.StatsEnabled = false
	onFresh, onAfter := lines(on, false), lines(on, true)
	offFresh, offAfter := lines(off, false), lines(off, true)
	t.Logf("text exposition lines, topology [1,1,1]: stats on %d fresh / %d after scenario; stats off %d / %d",
		onFresh, onAfter, offFresh, offAfter)
	// HELP/TYPE of every family, plus the current shape's zero samples:
	// running, waiting, two token counters, and the e2e histogram's buckets,
	// +Inf, _sum and _count.
	wantOff := 2*len(PipelineFamilies()) + 4 + len(SecondsBuckets()) + 3
	if offFresh != offAfter || offFresh != wantOff {
		t.Errorf("stats off: %d / %d lines, want %d both", offFresh, offAfter, wantOff)
	}
	if onFresh < 10*offFresh {
		t.Errorf("stats on: %d lines, want much more than stats off (%d)", onFresh, offFresh)
	}
}

func TestEscapeHelp(t *testing.T) {
	if got, want := escapeHelp("a\\b\nc \"q\""), `a\\b\nc "q"`; got != want {
		t.Errorf("escapeHelp = %q, want %q", got, want)
	}
}
