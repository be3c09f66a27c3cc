package check

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/scrape"
)

const testModel = "Qwen/Qwen3-Omni"

// metricsCore builds the metric core as a server would, with stats on or
// off, and (stats on) records two streamed chat requests with audio and one
// speech request.
func metricsCore(t *testing.T, stats bool) *omnimetrics.Metrics {
	t.Helper()
	m, err := omnimetrics.New(omnimetrics.Options{ModelName: testModel, StatsEnabled: stats, Upstream: true, Topology: []int{1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !stats {
		return m
	}
	sr := omnimetrics.StageReplica{Stage: 2, Replica: 0}
	for i := 0; i < 2; i++ {
		m.AudioFirstPacket(sr, 0.2)
		m.AudioStreamingFinalize(sr, []float64{0.2, 0.4, 0.6}, []int{9600, 9600, 9600}, 24000)
		m.AudioAtFinalize(sr, 14400, 24000, 0.3)
		m.Tokens(10, 40)
		m.RequestSucceeded(0.9, "stop")
		m.TransferHop(omnimetrics.Edge{FromStage: 0, ToStage: 1}, 5000, 0.002, 0.001, 0.0005)
	}
	m.AudioAtFinalize(sr, 24000, 24000, 0.4)
	m.RequestSucceeded(1.2, "stop")
	if up := m.Upstream(); up != nil {
		up.ObserveRequest(omnimetrics.StageReplica{Stage: 0}, 0.05, 0.5, 0.01, 0.02, 0.4, 10, 20, []float64{0.02, 0.03}, "stop")
	}
	return m
}

// exposition fetches the core's /metrics in the given format.
func exposition(t *testing.T, m *omnimetrics.Metrics, accept scrape.Accept) *scrape.Snapshot {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := scrape.Fetch(ctx, srv.URL+"/metrics", accept)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// textExposition returns the core's text exposition.
func textExposition(t *testing.T, m *omnimetrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseText(t *testing.T, text string) scrape.Families {
	t.Helper()
	fs, err := scrape.Parse("text/plain; version=0.0.4", []byte(text))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	return fs
}

func profileRules(t *testing.T) []Rule {
	t.Helper()
	rules, err := Profile(ProfileVLLMOmni)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// byRule indexes results by rule name.
func byRule(rep *Report) map[string]Result {
	out := map[string]Result{}
	for _, r := range rep.Results {
		out[r.Rule] = r
	}
	return out
}

// failures lists the failed results as "rule: detail".
func failures(rep *Report) string {
	var b strings.Builder
	for _, r := range rep.Results {
		if r.Status == Fail {
			b.WriteString(r.Rule + ": expected " + r.Expected + ", observed " + r.Observed + "; " + fullDetail(r) + "\n")
		}
	}
	return b.String()
}
