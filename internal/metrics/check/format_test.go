package check

import (
	"context"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	expo "github.com/omnibench/omnibench/internal/metrics/check/exposition"
	"github.com/omnibench/omnibench/scrape"
)

// formatInput is what `check` hands the format rules for one snapshot.
func formatInput(t *testing.T, snap *scrape.Snapshot) Input {
	t.Helper()
	x := &Exposition{Source: snap.Source(), Format: snap.Format(), Body: snap.Body, LineOffset: snap.BodyLine()}
	fs, err := snap.Families()
	x.ParseErr = err
	return Input{After: fs, Exposition: x}
}

func formatRules(t *testing.T) []Rule {
	t.Helper()
	rules, err := Profile(ProfileFormat)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func fetch(t *testing.T, url string, accept scrape.Accept) *scrape.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := scrape.Fetch(ctx, url, accept)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestFormatAcceptsRealServers: what real servers write passes every format
// rule: the simulator (stats on, after a streamed request, and off) and a
// client_golang registry with exemplars and _created samples, in text and
// OpenMetrics. For protobuf the rules say they do not apply.
func TestFormatAcceptsRealServers(t *testing.T) {
	on := startSimulator(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := streamChat(ctx, on.URL); err != nil {
		t.Fatal(err)
	}
	off := startSimulator(t, false)

	reg := prometheus.NewPedanticRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "app_requests_total", Help: "Requests, \"quoted\" \\ escaped."}, []string{"code"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "app_latency_seconds", Help: "Latency.", Buckets: []float64{0.1, 1}}, []string{"path"})
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "app_size_bytes", Help: "Sizes.", Objectives: map[float64]float64{0.5: 0.05, 0.99: 0.001}})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "app_temperature_celsius", Help: "Temperature."})
	reg.MustRegister(c, h, s, g)
	c.WithLabelValues("200").(prometheus.ExemplarAdder).AddWithExemplar(3, prometheus.Labels{"trace_id": "abc"})
	c.WithLabelValues("a\"b\\c\nd").Inc()
	h.WithLabelValues("/x").(prometheus.ExemplarObserver).ObserveWithExemplar(0.05, prometheus.Labels{"trace_id": "def"})
	h.WithLabelValues("/x").Observe(5)
	s.Observe(10)
	g.Set(-3.5)
	golang := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, EnableOpenMetricsTextCreatedSamples: true}))
	defer golang.Close()

	for name, url := range map[string]string{"simulator stats on": on.URL + "/metrics", "simulator stats off": off.URL + "/metrics",
		"client_golang": golang.URL} {
		for _, accept := range []scrape.Accept{scrape.AcceptText, scrape.AcceptOpenMetrics, scrape.AcceptProto} {
			snap := fetch(t, url, accept)
			rep := Evaluate(formatInput(t, snap), formatRules(t))
			if !rep.OK() {
				t.Errorf("%s, %s (%s): %s", name, accept, snap.ContentType, failures(rep))
			}
			if accept == scrape.AcceptProto {
				if r := byRule(rep)["format: text and OpenMetrics rules"]; r.Status != Skip || r.Observed != "not applicable" || len(rep.Notes) != 1 {
					t.Errorf("%s, protobuf: %+v, notes %v", name, r, rep.Notes)
				}
				continue
			}
			want := len(expo.Rules(expo.Text)) + 1 // and the parser rule
			if accept == scrape.AcceptOpenMetrics {
				want = len(expo.Rules(expo.OpenMetrics)) + 1
			}
			if rep.Passed != want || rep.Skipped != 0 {
				t.Errorf("%s, %s: %d passed, %d skipped", name, accept, rep.Passed, rep.Skipped)
			}
			if accept == scrape.AcceptOpenMetrics && name == "client_golang" && !strings.Contains(string(snap.Body), "# {trace_id=") {
				t.Errorf("no exemplar in the client_golang OpenMetrics body:\n%s", snap.Body)
			}
		}
	}
}

// TestFormatViolationsAreFailedRules: each violation is one failed result
// with its line in the file (after a snapshot's header line) and token, and
// a body expfmt rejects fails the parser rule while the other rules skip.
func TestFormatViolationsAreFailedRules(t *testing.T) {
	body := "# TYPE vllm:omni_audio_frames_total counter\nvllm:omni_audio_frames_total{model_name=\"m\"} NaN\n" +
		"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\n"
	path := t.TempDir() + "/snap.prom"
	snap := &scrape.Snapshot{URL: "http://127.0.0.1:1/metrics", ContentType: "text/plain; version=0.0.4", Body: []byte(body)}
	if err := snap.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	read, err := scrape.ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := Evaluate(formatInput(t, read), profileRules(t))
	var got []string
	for _, r := range rep.Results {
		if r.Status == Fail && strings.HasPrefix(r.Rule, formatPrefix) {
			got = append(got, r.Rule+"@"+strconv.Itoa(r.Line)+" "+r.Token)
		}
	}
	want := []string{
		`format: counter@3 vllm:omni_audio_frames_total{model_name="m"} NaN`,
		`format: histogram-buckets@5 h{}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("format failures:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A body the parser rejects: the parser rule fails at its line, the
	// scanner names the token, and no other rule is judged.
	bad := &scrape.Snapshot{ContentType: "text/plain; version=0.0.4", Body: []byte("ok 1\nbad{a=\"1\" 2\n")}
	rep = Evaluate(formatInput(t, bad), profileRules(t))
	res := byRule(rep)
	if r := res["format: parser"]; r.Status != Fail || r.Line != 2 {
		t.Errorf("parser rule: %+v", r)
	}
	if r := res["format: syntax"]; r.Status != Fail || r.Line != 2 {
		t.Errorf("syntax rule: %+v", r)
	}
	if r := res["naming conventions"]; r.Status != Skip || !strings.Contains(r.Detail, "does not parse") {
		t.Errorf("other rules are skipped: %+v", r)
	}
	if rep.Failed != 2 {
		t.Errorf("%d failed:\n%s", rep.Failed, failures(rep))
	}
}

// TestFormatCorpusThroughCheck runs one invalid corpus case of each format
// through the check, as `check --profile format FILE` does.
func TestFormatCorpusThroughCheck(t *testing.T) {
	// expfmt reads a _count that differs from +Inf; data after # EOF it does not.
	for name, failed := range map[string]int{"text-histogram-count-differs.prom": 1, "om-eof-content-after.om": 2} {
		snap, err := scrape.ReadSnapshot("testdata/format/invalid/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".om") {
			snap.ContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"
		}
		rep := Evaluate(formatInput(t, snap), formatRules(t))
		if rep.Failed != failed {
			t.Errorf("%s: %d failed\n%s", name, rep.Failed, failures(rep))
		}
	}
	if _, err := os.Stat("testdata/format/invalid/EXPECT"); err != nil {
		t.Fatal(err)
	}
}

// TestFormatOpenMetricsAllowances: what OpenMetrics allows and a stricter
// reading would reject passes `check --profile format` as a whole, parser
// included: a backslash before any character in a label value or HELP, an
// empty UNIT, a timestamp a series repeats.
func TestFormatOpenMetricsAllowances(t *testing.T) {
	body := "# TYPE files counter\n# UNIT files \n# HELP files Files under C:\\ and D:\\q.\n" +
		"files_total{dir=\"C:\\temp\\x\"} 3 100\nfiles_total{dir=\"C:\\temp\\x\"} 4 100\n# EOF\n"
	snap := &scrape.Snapshot{ContentType: "application/openmetrics-text; version=1.0.0; charset=utf-8", Body: []byte(body)}
	rep := Evaluate(formatInput(t, snap), formatRules(t))
	if !rep.OK() {
		t.Errorf("%s", failures(rep))
	}
}
