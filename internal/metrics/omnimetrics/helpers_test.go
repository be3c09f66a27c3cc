package omnimetrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/omnibench/omnibench/continuity"
)

// newTestMetrics builds a Metrics on a pedantic registry, which checks every
// collected metric against its descriptor.
func newTestMetrics(t testing.TB, opts Options) *Metrics {
	t.Helper()
	m, err := newMetrics(opts, prometheus.NewPedanticRegistry())
	if err != nil {
		t.Fatalf("newMetrics(%+v): %v", opts, err)
	}
	return m
}

// testModel is the model_name of every test scenario.
const testModel = "qwen3-omni"

// scenario drives the observe API with values whose expected exposition is
// written out by hand in testdata/stats_on_*.prom. Times are dyadic
// fractions, so every sum is exact in float64.
func scenario(m *Metrics) {
	m.SetRunning(3)
	m.SetWaiting(1)
	m.RequestSucceeded(0.375, "stop")
	m.RequestSucceeded(1.5, "length")
	m.RequestFailed()
	m.Tokens(10, 20)
	m.Tokens(5, 7)

	sr := StageReplica{Stage: 2, Replica: 0}
	m.AudioFirstPacket(sr, 0.125)
	m.AudioFirstPacket(sr, 0.625)
	m.AudioAtFinalize(sr, 48000, 24000, 1.0)   // duration 2 s, RTF 0.5
	m.AudioAtFinalize(sr, 12000, 24000, 0.625) // duration 0.5 s, RTF 1.25
	m.AudioAtFinalize(sr, 0, 24000, 0.25)      // no audio: skipped
	// Cases of docs/reference/continuity.md, section 3: gapless (0 s, continuous) and [0, 0.5] with
	// 2 x 4800 bytes (0.4 s, not continuous).
	m.AudioStreamingFinalize(sr, []float64{0, 0.05, 0.10, 0.15}, []int{4800, 4800, 4800, 4800}, 24000)
	m.AudioStreamingFinalize(sr, []float64{0, 0.5}, []int{4800, 4800}, 24000)

	e := Edge{FromStage: 0, FromReplica: 0, ToStage: 1, ToReplica: 0}
	m.TransferHop(e, 2048, 0.00390625, 0.0078125, 0.015625)
	m.TransferHop(e, 100000, 0.03125, 0.5, 2)
}

// scrape fetches the exposition from h over real HTTP on 127.0.0.1 with the
// given Accept header ("" sends none).
func scrape(t *testing.T, h http.Handler, accept string) (http.Header, []byte) {
	t.Helper()
	return scrapePath(t, h, "/metrics", accept)
}

// scrapePath is scrape of a given path and query.
func scrapePath(t *testing.T, h http.Handler, pathQuery, accept string) (http.Header, []byte) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+pathQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", req.URL, resp.StatusCode, body)
	}
	return resp.Header, body
}

// findMetric returns the series of family name whose labels include all of
// want, or nil.
func findMetric(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// familyNames returns the names of the gathered families.
func familyNames(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily, len(mfs))
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// bucketCount returns the cumulative count of the bucket with upper bound le.
func bucketCount(t *testing.T, h *dto.Histogram, le float64) uint64 {
	t.Helper()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	t.Fatalf("no bucket le=%v", le)
	return 0
}

// serverOpts are the options the simulator uses, with stats on.
func serverOpts(prefix string) Options {
	return Options{Prefix: prefix, ModelName: testModel, StatsEnabled: true, ContinuityMode: continuity.Reference}
}
