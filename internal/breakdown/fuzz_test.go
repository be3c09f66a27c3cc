package breakdown

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/omnibench/omnibench/scrape"
)

// FuzzCompute breaks down arbitrary pairs of expositions: whatever a server
// sends, Compute neither panics nor gives a consistent attribution whose
// parts do not add up, and its result encodes as JSON.
func FuzzCompute(f *testing.F) {
	f.Add([]byte(""), []byte(consistentRun().String()))
	f.Add([]byte(consistentRun().String()), []byte(consistentRun().String()))
	f.Add([]byte(""), []byte(newExpo().declare(famPipelineE2E, "histogram").String()))
	f.Add([]byte(""), []byte("# TYPE vllm:omni_e2e_request_latency_s histogram\n"+
		"vllm:omni_e2e_request_latency_s_bucket{le=\"+Inf\"} 2\nvllm:omni_e2e_request_latency_s_sum NaN\n"+
		"vllm:omni_e2e_request_latency_s_count 2\n"))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		bf, err := scrape.Parse("text/plain; version=0.0.4", before)
		if err != nil {
			return
		}
		af, err := scrape.Parse("text/plain; version=0.0.4", after)
		if err != nil {
			return
		}
		b := Compute(Select(bf, t0), Select(af, t0.Add(1e9)), ClientFigures{Requests: 2, MeanE2E: 0.62})
		if _, err := json.Marshal(b); err != nil {
			t.Fatalf("JSON: %v", err)
		}
		a := b.Attribution
		if !a.Consistent {
			return
		}
		sum := a.StageTime + a.TransferTime + a.Rest + a.ClientRemainder
		if math.IsNaN(sum) || math.Abs(sum-a.ClientE2E) > 1e-9*max(1, math.Abs(a.ClientE2E)) {
			t.Fatalf("consistent parts add up to %v, the client's e2e is %v: %+v", sum, a.ClientE2E, a)
		}
		for _, f := range b.Findings {
			if !(f.Ratio >= ImbalanceRatio) {
				t.Fatalf("finding below the ratio: %+v", f)
			}
		}
	})
}
