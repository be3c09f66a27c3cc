package runner

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// breakdownSim is a simulator whose code2wav stage has two replicas, the
// second four times slower than the first.
func breakdownSim(cfg *simulator.Config) {
	cfg.Topology = []int{1, 1, 2}
	cfg.Slow.Replicas = []simulator.SlowReplica{{Stage: 2, Replica: 1, Factor: 4}}
}

// reportText renders the run's text report at the default width.
func reportText(t *testing.T, out *Outcome) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Render(&buf, report.FormatTable, report.RunTables(out.Report())...); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A run against a pipeline with a slow replica names it, in the text
// report and in the JSON summary, and its results file holds the scrapes
// the same breakdown is rebuilt from.
func TestRunBreakdownNamesSlowReplica(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, breakdownSim)
	out := mustRun(t, baseConfig(sim.URL, wl, 12, 2))
	b := out.Breakdown
	if b == nil || !b.Computable {
		t.Fatalf("breakdown %+v", b)
	}
	var slow *breakdown.Finding
	for i, f := range b.Findings {
		if f.Kind == breakdown.FindingReplicaSlow {
			slow = &b.Findings[i]
		}
	}
	if slow == nil || slow.Stage != "2" || slow.Replica != "1" {
		t.Fatalf("findings %+v, want stage 2 replica 1 slow", b.Findings)
	}
	text := reportText(t, out.Outcome)
	for _, want := range []string{breakdown.TitleStages, breakdown.TitleEdges, breakdown.TitleAttribution,
		"2/1", "finding: " + slow.Note[:20]} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if n := len([]rune(line)); n > report.DefaultWidth {
			t.Errorf("line %d is %d columns wide: %s", i+1, n, line)
		}
	}
	var page bytes.Buffer
	sections := report.RunSectionsSet(out.Report(), out.Set, out.Worst)
	if err := report.WriteHTML(&page, report.HTMLReport{Title: "t", Sections: sections}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-chart="breakdown-waterfall"`, `data-chart="server-queues"`,
		`data-chart="server-rates"`, ">stage 2<", ">client side<"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML report lacks %s", want)
		}
	}
	doc, err := json.Marshal(out.Document())
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Breakdown struct {
			Computable bool `json:"computable"`
			Findings   []struct {
				Kind, Stage, Replica string
			} `json:"findings"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	if !parsed.Breakdown.Computable || !strings.Contains(string(doc), `"kind":"replica_slow","stage":"2","replica":"1"`) {
		t.Errorf("the JSON summary's breakdown %+v", parsed.Breakdown)
	}
	// The results file rebuilds the same breakdown.
	h, _, err := results.ReadNamedTo("run.jsonl", bytes.NewReader(out.jsonl), nil)
	if err != nil {
		t.Fatal(err)
	}
	re, _ := BreakdownOfScrapes(h.Scrapes, summary.SetOf(out.Records))
	if re == nil || !re.Computable || len(re.Findings) != len(b.Findings) || re.Requests != b.Requests ||
		len(re.Stages) != len(b.Stages) || re.Findings[0].Note != b.Findings[0].Note {
		t.Errorf("rebuilt from the results file: %+v\nthe run's: %+v", re, b)
	}
}

// A server whose stats are off has nothing to break down: the report says
// why instead of giving numbers.
func TestRunBreakdownStatsOff(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, func(c *simulator.Config) { c.StatsEnabled = false })
	out := mustRun(t, baseConfig(sim.URL, wl, 3, 1))
	if b := out.Breakdown; b == nil || b.Computable || len(b.Reasons) == 0 {
		t.Fatalf("breakdown %+v, want one that says why it cannot be computed", b)
	}
	text := reportText(t, out.Outcome)
	if !strings.Contains(text, "the breakdown cannot be computed: ") {
		t.Errorf("the text report does not say why there is no breakdown:\n%s", text)
	}
	if strings.Contains(text, breakdown.TitleEdges) {
		t.Errorf("edges printed without a breakdown:\n%s", text)
	}
}

// metricsGate sits in front of a server: it counts the scrapes of
// /metrics, fails the one numbered failAt (1-based) and holds every other
// request until it has seen want scrapes, so that a run's interval scrapes
// happen during its load however slow the machine.
type metricsGate struct {
	proxy  http.Handler
	want   int
	failAt int

	mu      sync.Mutex
	scrapes int
	enough  chan struct{}
	// asked holds each scrape's Accept and Accept-Encoding headers.
	asked [][2]string
}

func newMetricsGate(t *testing.T, target string, want, failAt int) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a response cut by the end of the test is no failure
	g := &metricsGate{proxy: proxy, want: want, failAt: failAt, enough: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

func (g *metricsGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		select {
		case <-g.enough:
		case <-r.Context().Done():
			return
		}
		g.proxy.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	g.scrapes++
	g.asked = append(g.asked, [2]string{r.Header.Get("Accept"), r.Header.Get("Accept-Encoding")})
	n := g.scrapes
	if n == g.want {
		close(g.enough)
	}
	g.mu.Unlock()
	if n == g.failAt {
		http.Error(w, "scrape refused by the test", http.StatusServiceUnavailable)
		return
	}
	g.proxy.ServeHTTP(w, r)
}

// The interval scrapes write scrape lines during the load (a failed one a
// gap with its reason), the timeline has their points, and the report of
// the results file alone shows the same breakdown.
func TestRunIntervalScrapes(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, breakdownSim)
	// The first scrape, the one that primes the interval scrapes' selector,
	// a failed interval scrape and two good ones: the requests wait for the
	// fifth.
	gate := newMetricsGate(t, sim.URL, 5, 3)
	cfg := baseConfig(gate.URL, wl, 4, 2)
	cfg.ScrapeInterval = 10 * time.Millisecond
	out := mustRun(t, cfg)
	h, _, err := results.ReadNamedTo("run.jsonl", bytes.NewReader(out.jsonl), nil)
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	gaps := 0
	for _, sc := range h.Scrapes {
		phases[sc.Phase]++
		if sc.Gap != "" {
			gaps++
			if !strings.Contains(sc.Gap, "503") {
				t.Errorf("gap reason %q does not say what failed", sc.Gap)
			}
		}
	}
	// The scrapes are sequential: the failed third and the fourth ended
	// before the fifth released the requests; the fifth may be cut short
	// by the end of the load, which is no line.
	if phases[results.ScrapeFirst] != 1 || phases[results.ScrapeLast] != 1 || phases[results.ScrapeInterval] < 2 || gaps != 1 {
		t.Fatalf("scrape lines by phase %v, %d gaps; want first, last, two interval scrapes or more, one gap", phases, gaps)
	}
	if len(out.Timeline) < 3 {
		t.Errorf("timeline %+v", out.Timeline)
	}
	sawGap := false
	for _, p := range out.Timeline {
		sawGap = sawGap || p.Gaps > 0
	}
	if !sawGap {
		t.Errorf("the failed scrape is no gap of the timeline: %+v", out.Timeline)
	}
	re, points := BreakdownOfScrapes(h.Scrapes, summary.SetOf(out.Records))
	if re == nil || !re.Computable || re.Requests != out.Breakdown.Requests || len(points) != len(out.Timeline) {
		t.Errorf("rebuilt from the results file: %+v, %d points; the run's %d points", re, len(points), len(out.Timeline))
	}
}

// The interval scrapes ask for the text format without compression,
// between a first and a last scrape that ask like Prometheus (protobuf
// first): the timeline built across the two formats counts, interval by
// interval, the requests the breakdown of the first and last counts.
func TestRunIntervalScrapesAskForText(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, breakdownSim)
	gate := newMetricsGate(t, sim.URL, 4, 0)
	cfg := baseConfig(gate.URL, wl, 6, 2)
	cfg.ScrapeInterval = 10 * time.Millisecond
	srv := gate.Config.Handler.(*metricsGate)
	out := mustRun(t, cfg)
	srv.mu.Lock()
	asked := slices.Clone(srv.asked)
	srv.mu.Unlock()
	if len(asked) < 4 {
		t.Fatalf("%d scrapes, want the first, two interval scrapes or more and the last", len(asked))
	}
	for i, a := range asked {
		first, last := i == 0, i == len(asked)-1
		switch {
		case (first || last) && !strings.HasPrefix(a[0], "application/vnd.google.protobuf"):
			t.Errorf("scrape %d of %d asked for %q, want protobuf first", i+1, len(asked), a[0])
		case !first && !last && (a[0] != scrape.AcceptText.Header() || a[1] != "identity"):
			t.Errorf("interval scrape %d asked for %q, encoding %q; want %q, identity", i, a[0], a[1], scrape.AcceptText.Header())
		}
	}
	b := out.Breakdown
	if b == nil || !b.Computable || b.Requests < 1 {
		t.Fatalf("breakdown %+v, want requests counted", b)
	}
	counted := 0.0
	for _, p := range out.Timeline {
		for _, r := range p.Rates {
			if r.Name == breakdown.RatePipelineRequests {
				counted += r.PerSecond * p.End.Sub(p.Start).Seconds()
			}
		}
	}
	if math.Abs(counted-b.Requests) > 1e-6*b.Requests {
		t.Errorf("the timeline's %d points count %v requests, the breakdown %v", len(out.Timeline), counted, b.Requests)
	}
}

// warmupGate passes requests on to the simulator but holds the response
// of the first POST (the run's only warm-up request) until a scrape of
// /metrics that arrived after the simulator finished it has been served:
// that scrape precedes the measured phase and counts the warm-up request,
// so the measured window starts there and holds the measured requests only.
type warmupGate struct {
	proxy *httputil.ReverseProxy

	mu       sync.Mutex
	requests int
	watching bool          // the warm-up response is ready
	scraped  chan struct{} // closed once a scrape after it was served
	closed   bool
}

func newWarmupGate(t *testing.T, target string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a response cut by the end of the test is no failure
	srv := httptest.NewServer(&warmupGate{proxy: proxy, scraped: make(chan struct{})})
	t.Cleanup(srv.Close)
	return srv
}

func (g *warmupGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	after := r.URL.Path == "/metrics" && g.watching
	if r.Method == http.MethodPost { // a request of the load, not a probe
		g.requests++
	}
	first := r.Method == http.MethodPost && g.requests == 1
	g.mu.Unlock()
	switch {
	case r.URL.Path == "/metrics":
		rec := httptest.NewRecorder()
		g.proxy.ServeHTTP(rec, r)
		copyResponse(w, rec)
		// The warm-up goes on only after a scrape that counts it: the
		// simulator records a request as its response ends, which may be
		// just after the proxy has read the last byte.
		g.mu.Lock()
		if after && !g.closed && countsARequest(rec) {
			g.closed = true
			close(g.scraped)
		}
		g.mu.Unlock()
	case first:
		rec := httptest.NewRecorder()
		g.proxy.ServeHTTP(rec, r)
		g.mu.Lock()
		g.watching = true
		g.mu.Unlock()
		select {
		case <-g.scraped:
		case <-r.Context().Done():
			return
		}
		copyResponse(w, rec)
	default:
		g.proxy.ServeHTTP(w, r)
	}
}

// copyResponse sends what rec recorded.
func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// countsARequest reports whether a recorded /metrics response counts a
// finished pipeline request.
func countsARequest(rec *httptest.ResponseRecorder) bool {
	fs, err := scrape.Parse(rec.Header().Get("Content-Type"), rec.Body.Bytes())
	if err != nil {
		return false
	}
	f, ok := fs.Lookup("vllm:omni_e2e_request_latency_s")
	if !ok {
		return false
	}
	for _, sr := range f.Series {
		if sr.Histogram != nil && sr.Histogram.Count >= 1 {
			return true
		}
	}
	return false
}

// A run with a warm-up and interval scrapes breaks down its measured
// window apart: from the interval scrape before the measured phase, the
// server's requests are the measured ones only, beside the client's
// measured requests; the text report shows it and the results file
// rebuilds it.
func TestRunBreakdownMeasuredWindow(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, nil)
	gate := newWarmupGate(t, sim.URL)
	cfg := baseConfig(gate.URL, wl, 4, 2)
	cfg.Load.Warmup = 1
	cfg.ScrapeInterval = 10 * time.Millisecond
	out := mustRun(t, cfg)
	b := out.Breakdown
	if b == nil || !b.Computable || b.Requests != 5 {
		t.Fatalf("run breakdown %+v, want 5 requests (the warm-up's and the 4 measured)", b)
	}
	if b.Measured == nil || b.Measured.Breakdown == nil {
		t.Fatalf("measured window %+v", b.Measured)
	}
	m := b.Measured.Breakdown
	if !m.Computable || m.Requests != 4 || m.Attribution.ClientRequests != 4 {
		t.Fatalf("measured window: %v computable, %v server requests, %d client requests; want 4 and 4 (%s)",
			m.Computable, m.Requests, m.Attribution.ClientRequests, b.Measured.Note)
	}
	if text := reportText(t, out.Outcome); !strings.Contains(text, breakdown.TitleMeasured) {
		t.Errorf("the text report has no measured window:\n%s", text)
	}
	h, _, err := results.ReadNamedTo("run.jsonl", bytes.NewReader(out.jsonl), nil)
	if err != nil {
		t.Fatal(err)
	}
	re, _ := BreakdownOfScrapes(h.Scrapes, summary.SetOf(out.Records))
	if re == nil || re.Measured == nil || re.Measured.Breakdown == nil || re.Measured.Breakdown.Requests != 4 {
		t.Errorf("rebuilt from the results file: measured window %+v", re.Measured)
	}
}

// Without an interval scrape in the warm-up, the measured window has no
// breakdown of its own, and says so when interval scrapes were taken; a
// run that took none gets no measured window at all (nothing was asked).
func TestRunBreakdownMeasuredWindowWithoutScrape(t *testing.T) {
	wl := workload(t, "tts-short", "", "")
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 2, 1)
	cfg.Load.Warmup = 1
	if out := mustRun(t, cfg); out.Breakdown == nil || out.Breakdown.Measured != nil {
		t.Fatalf("no interval scrapes: breakdown %v, want one without a measured window", out.Breakdown)
	}
	// With interval scrapes of which none fell before the measured phase,
	// the window says why it has no breakdown. A run gives the
	// records; the scrapes are the function's input.
	out := mustRun(t, cfg)
	out.Breakdown.Measured = measuredWindow(nil, true, breakdown.Series{}, out.Set)
	w := out.Breakdown.Measured
	if w == nil || w.Breakdown != nil || !strings.Contains(w.Note, "no interval scrape") {
		t.Fatalf("measured window %+v, want a note that no scrape bounds it", w)
	}
	body, err := json.Marshal(out.Breakdown)
	if err != nil || !strings.Contains(string(body), `"measured_window":{"note":"no interval scrape`) {
		t.Errorf("JSON %s (%v) has no measured window note", body, err)
	}
}
