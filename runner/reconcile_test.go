package runner

import (
	"math"
	"testing"

	"github.com/omnibench/omnibench/simulator"
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
