package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

const (
	cmpBase   = "../../internal/experiment/compare/testdata/base.jsonl"
	cmpSlower = "../../internal/experiment/compare/testdata/slower.jsonl"
	cmpSame   = "../../internal/experiment/compare/testdata/same.jsonl"
)

// runCompareCmd runs `omnibench compare args...` on a fresh root and returns
// stdout, stderr and the exit status main would use.
func runCompareCmd(t *testing.T, args ...string) (string, string, int, error) {
	t.Helper()
	root := newRootCmd("test")
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"compare"}, args...))
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	code := 0
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
	}
	return out.String(), errOut.String(), code, err
}

func TestCompareCmdRegressionExit3(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "ttfp:5", "--fail-on-regression", "e2e:50")
	if code != 3 || err == nil || !strings.Contains(err.Error(), "ttfp: +31.54% worse, limit 5%") {
		t.Fatalf("code %d, err %v; want 3 and a ttfp regression", code, err)
	}
	if strings.Contains(err.Error(), "e2e") {
		t.Errorf("e2e (+19%% < 50%%) reported as a regression: %v", err)
	}
	// The table is printed before the verdict.
	if !strings.Contains(out, "+31.54%") || !strings.Contains(out, "gate ttfp:5: FAIL") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestCompareCmdNoRegressionExit0(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSame, "--fail-on-regression", "ttfp:5")
	if code != 0 || err != nil {
		t.Fatalf("code %d, err %v; want 0", code, err)
	}
	if !strings.Contains(out, "gate ttfp:5: ok") {
		t.Errorf("stdout:\n%s", out)
	}
	// Within the limit: slower is +19 % on e2e, the gate allows 25 %.
	if _, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "e2e:25"); code != 0 {
		t.Errorf("e2e:25 on a +19%% change: code %d, err %v", code, err)
	}
}

func TestCompareCmdUsageErrorsExit2(t *testing.T) {
	for name, args := range map[string][]string{
		"bad metric":     {cmpBase, cmpSlower, "--fail-on-regression", "latency:5"},
		"bad format":     {cmpBase, cmpSlower, "--format", "yaml"},
		"bad test":       {cmpBase, cmpSlower, "--test", "z"},
		"bad flag value": {cmpBase, cmpSlower, "--alpha", "x"},
		"one file":       {cmpBase},
		"missing file":   {cmpBase, "nope.jsonl"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, code, err := runCompareCmd(t, args...)
			if code != 2 {
				t.Errorf("code %d, err %v; want 2", code, err)
			}
		})
	}
	_, _, _, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "latency:5")
	if err == nil || !strings.Contains(err.Error(), `unknown metric "latency"`) {
		t.Errorf("bad metric error = %v", err)
	}
}

func TestCompareCmdFormats(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--format", "json", "--fail-on-regression", "ttfp:5")
	if code != 3 {
		t.Fatalf("json: code %d, err %v", code, err)
	}
	var v struct {
		Regression bool `json:"regression"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || !v.Regression {
		t.Errorf("json output (%v): %s", err, out)
	}
	out, errOut, code, err := runCompareCmd(t, cmpBase, cmpSame, "--format", "csv", "--test", "utest", "--percentiles", "50")
	if code != 0 || !strings.HasPrefix(out, "metric,unit,n_a,n_b,mean_a,mean_b,") || !strings.Contains(out, "\nttfp,ms,10,10,126.2,126.2,0,false,") ||
		!strings.Contains(out, ",124.5,124.5\n") || !strings.Contains(errOut, "utest decides") {
		t.Errorf("csv: code %d err %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
}

func TestCompareCmdHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cmp.html")
	if _, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--html", path); code != 0 {
		t.Fatalf("code %d, err %v", code, err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-chart="ab-cdf-ttfp"`, `data-chart="ab-cdf-e2e"`, "base.jsonl", "slower.jsonl"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// writeResults writes a results JSONL file for a test.
func writeResults(t *testing.T, path string, h results.Header, recs []results.Record) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := results.NewWriter(f)
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCompareCmdFailureRateExit3(t *testing.T) {
	h, recs, err := results.ReadFile(cmpBase)
	if err != nil {
		t.Fatal(err)
	}
	// B: base's requests and 14 more that failed, 15 of 25 against 1 of 11.
	for i := 0; i < 14; i++ {
		recs = append(recs, results.Record{Type: "request", Seq: 100 + i, Kind: results.KindSpeech, Status: 503,
			ErrorClass: results.ErrHTTPStatus, Error: "503 Service Unavailable", E2ES: 0.01})
	}
	worse := filepath.Join(t.TempDir(), "worse.jsonl")
	writeResults(t, worse, h, recs)
	out, _, code, err := runCompareCmd(t, cmpBase, worse, "--fail-on-regression", "e2e:50")
	if code != 3 || err == nil || !strings.Contains(err.Error(), "failure_rate: B fails more often: ") {
		t.Fatalf("code %d, err %v; want 3 and the failure-rate gate", code, err)
	}
	if !strings.Contains(out, "failed requests: A 9.1% (1/11), B 60.0% (15/25)") {
		t.Errorf("stdout:\n%s", out)
	}
	// The latencies alone would pass: without the failures B equals A.
	if _, _, code, err := runCompareCmd(t, cmpBase, cmpSame, "--fail-on-regression", "e2e:50"); code != 0 {
		t.Errorf("same: code %d, err %v", code, err)
	}
}

// Two results files of the same open-loop run, one whose every request was
// sent 1 s after its intended start: compare says the late one is worse.
func TestCompareCmdLateRunIsWorse(t *testing.T) {
	h, recs, err := results.ReadFile(cmpBase)
	if err != nil {
		t.Fatal(err)
	}
	h.Mode, h.Rate = "open", 2
	write := func(name string, lag float64) string {
		out := append([]results.Record(nil), recs...)
		for i := range out {
			out[i].LatencyOrigin = results.OriginIntended
			out[i].LagS = lag
			out[i].IntendedS = out[i].SentS - lag
		}
		path := filepath.Join(t.TempDir(), name)
		writeResults(t, path, h, out)
		return path
	}
	onTime, late := write("on-time.jsonl", 0), write("late.jsonl", 1)
	out, _, code, err := runCompareCmd(t, onTime, late, "--fail-on-regression", "e2e:5")
	if code != 3 || err == nil || !strings.Contains(err.Error(), "e2e: +63.94% worse") {
		t.Fatalf("code %d, err %v; want 3 and e2e worse by 1000/1564 = 63.94%%\n%s", code, err, out)
	}
	if !strings.Contains(out, "2564") {
		t.Errorf("e2e mean of the late run (1564 + 1000 ms) not shown:\n%s", out)
	}
}

// A candidate whose measured requests all failed: nothing measured (exit 1)
// without gates, a regression (exit 3) with them; never unusable input.
func TestCompareCmdCandidateOnlyFailed(t *testing.T) {
	h, _, err := results.ReadFile(cmpBase)
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for i := 0; i < 10; i++ {
		recs = append(recs, results.Record{Type: "request", Seq: i, Kind: results.KindSpeech, Status: 503,
			ErrorClass: results.ErrHTTPStatus, Error: "503 Service Unavailable", E2ES: 0.01})
	}
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	writeResults(t, broken, h, recs)
	if _, _, code, err := runCompareCmd(t, cmpBase, broken); code != 1 || !strings.Contains(err.Error(), "nothing was measured: all 10 measured requests failed") {
		t.Errorf("no gates: code %d, err %v; want 1", code, err)
	}
	if _, _, code, err := runCompareCmd(t, cmpBase, broken, "--fail-on-regression", "e2e:50"); code != 3 || !strings.Contains(err.Error(), "failure_rate: B fails more often") {
		t.Errorf("gated: code %d, err %v; want 3", code, err)
	}
}

// TestCompareCmdVerdictLine: the report ends with the verdict its status
// states: PASS (0), FAIL with the gate (3), NO VERDICT with the reason for
// a saturated run under gates (1), whose gates are not judged.
func TestCompareCmdVerdictLine(t *testing.T) {
	h, recs, err := results.ReadFile(cmpSame)
	if err != nil {
		t.Fatal(err)
	}
	h.Client = &results.ClientHealth{Saturated: true, ClientDelayMS: 40, Reasons: []string{"CPU 97 % of 2 cores"}}
	saturated := filepath.Join(t.TempDir(), "saturated.jsonl")
	writeResults(t, saturated, h, recs)
	for _, tc := range []struct {
		b    string
		code int
		line string
	}{
		{cmpSame, 0, "PASS: no regression: 2 gates held"},
		{cmpSlower, 3, "FAIL: regression: ttfp"},
		{saturated, 1, "NO VERDICT: B (" + saturated + ") was measured by a saturated load generator"},
	} {
		out, _, code, _ := runCompareCmd(t, cmpBase, tc.b, "--fail-on-regression", "ttfp:5")
		if code != tc.code || !strings.HasPrefix(verdictLine(out), tc.line) {
			t.Errorf("%s: exit %d, verdict %q; want %d, %q", tc.b, code, verdictLine(out), tc.code, tc.line)
		}
		if tc.code == 1 && strings.Contains(out, "gate ttfp:5: ok") {
			t.Errorf("%s: the refused gate shows its verdict:\n%s", tc.b, out)
		}
	}
}
