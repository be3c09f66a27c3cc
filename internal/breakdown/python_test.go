package breakdown

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pythonWithClient finds a Python interpreter that has prometheus_client
// (Debian's python3-prometheus-client installs it for /usr/bin/python3,
// which need not be the python3 first on PATH), or skips the test.
func pythonWithClient(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
		err := exec.CommandContext(ctx, py, "-c", "import prometheus_client").Run()
		cancel()
		if err == nil {
			return py
		}
	}
	t.Skip("no python3 with prometheus_client (Debian: apt-get install python3-prometheus-client)")
	return ""
}

// startPythonServer runs testdata/exposition_server.py and returns its base
// URL once it says its port.
func startPythonServer(t *testing.T, args ...string) string {
	t.Helper()
	py := pythonWithClient(t)
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, py, append([]string{"testdata/exposition_server.py"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", py, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait() // killed by the cancel
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		port, ok := strings.CutPrefix(strings.TrimSpace(l), "port ")
		if !ok {
			t.Fatalf("python server said %q; stderr: %s", l, stderr.String())
		}
		return "http://127.0.0.1:" + port
	case <-time.After(testDeadline):
		t.Fatalf("python server did not say its port within %v", testDeadline)
	}
	return ""
}

// advance makes the Python server record its run.
func advance(t *testing.T, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/advance", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("advance: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("advance: status %d", resp.StatusCode)
	}
}

// The breakdown of an exposition written by the official Python client
// (vllm_omni: spelling, float counts, _created series), whose parts are
// known from the script's constants: stages 0.05 + 0.04 + (0.1 + 0.3) / 2 s,
// transfers 0.004 + 3 * (0.021 + 0.002) / 2 s, rest 0.005 s per request.
func TestPythonExpositionBreakdown(t *testing.T) {
	base := startPythonServer(t)
	before := scrapeSeries(t, base)
	advance(t, base)
	b := Compute(before, scrapeSeries(t, base), ClientFigures{Requests: 8, MeanE2E: 0.3355})
	a := b.Attribution
	if !b.Computable || !a.Consistent {
		t.Fatalf("computable %v consistent %v: %q %q", b.Computable, a.Consistent, b.Reasons, a.Reasons)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"server e2e", a.ServerE2E, 0.3335}, {"stage", a.StageTime, 0.29}, {"transfer", a.TransferTime, 0.0385},
		{"rest", a.Rest, 0.005}, {"client remainder", a.ClientRemainder, 0.002},
	} {
		if d := c.got - c.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	got := sortedKinds(b.Findings)
	want := []string{"edge_slow 1/0->2/0", "replica_slow 2/1"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings %q, want %q: %+v", got, want, b.Findings)
	}
}

func TestPythonExpositionStatsOff(t *testing.T) {
	base := startPythonServer(t, "--stats-off")
	before := scrapeSeries(t, base)
	advance(t, base)
	b := Compute(before, scrapeSeries(t, base), ClientFigures{Requests: 8, MeanE2E: 0.3})
	if b.Computable || !strings.Contains(strings.Join(b.Reasons, "\n"), "stats are off") {
		t.Fatalf("computable %v, reasons %q", b.Computable, b.Reasons)
	}
}
