package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// Test data (hand-written JSONL, see testdata/):
//   base.jsonl    10 successful speech requests, plus one warm-up (ttfp 0.5 s,
//                 e2e 3 s) and one failed (503) request that must be left out.
//                 ttfp: 0.120 0.131 0.118 0.125 0.140 0.122 0.128 0.119 0.135 0.124
//                 (sum 1.262, mean 0.1262); e2e: 1.50 1.62 1.48 1.55 1.70 1.52 1.58
//                 1.49 1.66 1.54 (sum 15.64, mean 1.564); audio 2.0 s each.
//   slower.jsonl  the same shape, every request about 40 ms later to first audio
//                 (ttfp sum 1.660, mean 0.166) and 300 ms longer end to end
//                 (e2e mean 1.864).
//   same.jsonl    base's ten successful requests with new ids, written out of
//                 seq order, no warm-up or failed request.

func load(t *testing.T, name string) Run {
	t.Helper()
	r, err := Load("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func row(t *testing.T, res *Result, name string) Row {
	t.Helper()
	for _, r := range res.Rows {
		if r.Metric.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return Row{}
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func TestCompareSlower(t *testing.T) {
	gates := []Gate{{Metric: "ttfp", MaxPct: 5}, {Metric: "e2e", MaxPct: 50}}
	res, err := Compare(load(t, "base.jsonl"), load(t, "slower.jsonl"), Options{Gates: gates})
	if err != nil {
		t.Fatal(err)
	}
	if res.A.Used != 10 || res.A.Failed != 1 || res.A.Warmup != 1 || res.A.Records != 12 {
		t.Errorf("arm A = %+v, want 10 used of 12, 1 failed, 1 warm-up", res.A)
	}
	// Speech requests carry no text: no ttft row.
	var names []string
	for _, r := range res.Rows {
		names = append(names, r.Metric.Name)
	}
	if got := strings.Join(names, ","); got != "ttfp,e2e,rtf_last_chunk,rtf_e2e,underrun,audio_duration" {
		t.Errorf("rows = %s", got)
	}

	ttfp := row(t, res, "ttfp")
	// Hand computation: means 1.262/10 and 1.660/10 (warm-up and failed
	// records excluded); delta = 100*(0.166-0.1262)/0.1262 = 31.537242472266247 %.
	if !near(ttfp.A.Mean, 0.1262, 1e-12) || !near(ttfp.B.Mean, 0.166, 1e-12) {
		t.Errorf("ttfp means = %v, %v", ttfp.A.Mean, ttfp.B.Mean)
	}
	if !ttfp.Tested || !ttfp.Significant || !near(ttfp.Comparison.DeltaPct, 31.537242472266247, 1e-10) {
		t.Errorf("ttfp row: tested=%v significant=%v delta=%v", ttfp.Tested, ttfp.Significant, ttfp.Comparison.DeltaPct)
	}
	// e2e: 100*(1.864-1.564)/1.564 = 19.18158567774936 %.
	e2e := row(t, res, "e2e")
	if !e2e.Significant || !near(e2e.Comparison.DeltaPct, 19.18158567774936, 1e-10) {
		t.Errorf("e2e row: significant=%v delta=%v", e2e.Significant, e2e.Comparison.DeltaPct)
	}
	// The p-value is stats.Welch's on the same values.
	a := []float64{0.120, 0.131, 0.118, 0.125, 0.140, 0.122, 0.128, 0.119, 0.135, 0.124}
	b := []float64{0.160, 0.171, 0.155, 0.166, 0.180, 0.162, 0.169, 0.158, 0.175, 0.164}
	w, err := stats.Welch(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ttfp.Comparison.P, w.P, 1e-12) {
		t.Errorf("ttfp p = %v, want Welch p %v", ttfp.Comparison.P, w.P)
	}

	// Holm over the 6 tested rows: adjusted >= raw, and the underrun and
	// audio duration changes are not significant.
	if res.Tested() != 6 {
		t.Errorf("tested = %d, want 6", res.Tested())
	}
	for _, r := range res.Rows {
		if r.HolmP < r.Comparison.P {
			t.Errorf("%s: holm p %v < raw p %v", r.Metric.Name, r.HolmP, r.Comparison.P)
		}
	}
	if row(t, res, "underrun").Significant || row(t, res, "audio_duration").Significant {
		t.Error("underrun or audio duration significant")
	}

	// Gates: ttfp +31.5 % > 5 % fails; e2e +19.2 % < 50 % passes.
	err = res.Err()
	var re *RegressionError
	if !errors.As(err, &re) || len(re.Failed) != 1 || re.Failed[0].Metric != "ttfp" {
		t.Fatalf("Err() = %v, want a RegressionError for ttfp only", err)
	}
	if !strings.Contains(err.Error(), "ttfp: +31.54% worse, limit 5%") {
		t.Errorf("error text = %q", err)
	}
	if res.Gates[1].Failed || res.Gates[1].Metric != "e2e" {
		t.Errorf("e2e gate = %+v", res.Gates[1])
	}

	var out bytes.Buffer
	if err := res.Write(&out, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+31.54%", "+19.18%", "126.2", "166.0", "warning: audio_duration: all samples equal", "gate ttfp:5: FAIL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCompareIdentical(t *testing.T) {
	base, same := load(t, "base.jsonl"), load(t, "same.jsonl")
	res, err := Compare(base, same, Options{Gates: []Gate{{Metric: "ttfp", MaxPct: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if !r.Tested || r.Significant || r.Comparison.DeltaPct != 0 || r.Comparison.Welch.P != 1 {
			t.Errorf("%s: tested=%v significant=%v delta=%v p=%v", r.Metric.Name, r.Tested, r.Significant, r.Comparison.DeltaPct, r.Comparison.Welch.P)
		}
		// same.jsonl is written out of order; sorted by seq it is base's
		// sequence, so the autocorrelations agree.
		if c := r.Comparison; !(c.Lag1A == c.Lag1B || math.IsNaN(c.Lag1A) && math.IsNaN(c.Lag1B)) {
			t.Errorf("%s: lag-1 %v vs %v: records not taken in seq order", r.Metric.Name, c.Lag1A, c.Lag1B)
		}
	}
	if err := res.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
	var out bytes.Buffer
	if err := res.Write(&out, "markdown"); err != nil {
		t.Fatal(err)
	}
	// The first ttfp line is the comparison row (the second the percentiles).
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "| ttfp (ms)") {
			if !strings.Contains(line, "| ~ ") {
				t.Errorf("ttfp row without ~: %s", line)
			}
			break
		}
	}
	if !strings.Contains(out.String(), "gate ttfp:5: ok") {
		t.Errorf("output lacks the gate verdict:\n%s", out.String())
	}
}

func TestWriteJSON(t *testing.T) {
	res, err := Compare(load(t, "base.jsonl"), load(t, "slower.jsonl"), Options{Gates: []Gate{{Metric: "e2e", MaxPct: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Write(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		SchemaVersion int     `json:"schema_version"`
		Test          string  `json:"test"`
		Correction    string  `json:"correction"`
		Alpha         float64 `json:"alpha"`
		Regression    bool    `json:"regression"`
		A             struct {
			Used   int `json:"used"`
			Warmup int `json:"warmup"`
		} `json:"a"`
		Metrics []struct {
			Metric   string   `json:"metric"`
			Unit     string   `json:"unit"`
			DeltaPct *float64 `json:"delta_pct"`
			HolmP    *float64 `json:"holm_p"`
			A        struct {
				Mean float64 `json:"mean"`
			} `json:"a"`
			Welch *struct {
				T  *float64 `json:"t"`
				DF *float64 `json:"df"`
			} `json:"welch"`
			Significant bool `json:"significant"`
		} `json:"metrics"`
		Gates []struct {
			Metric string `json:"metric"`
			Failed bool   `json:"failed"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.String())
	}
	if got.SchemaVersion != 1 || got.Test != "welch" || got.Correction != "holm" || got.Alpha != 0.05 || !got.Regression ||
		got.A.Used != 10 || got.A.Warmup != 1 || len(got.Gates) != 2 || !got.Gates[0].Failed || got.Gates[1].Metric != FailureRateGate {
		t.Errorf("JSON header fields = %+v", got)
	}
	if len(got.Metrics) != 6 || got.Metrics[0].Metric != "ttfp" || got.Metrics[0].Unit != "s" ||
		!near(got.Metrics[0].A.Mean, 0.1262, 1e-12) || !got.Metrics[0].Significant {
		t.Errorf("JSON ttfp = %+v", got.Metrics[0])
	}
	// audio_duration: all samples equal -> t and df undefined -> null.
	ad := got.Metrics[5]
	if ad.Metric != "audio_duration" || ad.Welch == nil || ad.Welch.T != nil || ad.Welch.DF != nil || ad.DeltaPct == nil || *ad.DeltaPct != 0 {
		t.Errorf("JSON audio_duration = %+v", ad)
	}
}

func TestWriteCSV(t *testing.T) {
	res, err := Compare(load(t, "base.jsonl"), load(t, "same.jsonl"), Options{Percentiles: []float64{}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Write(&buf, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Tidy: one header row, one row per metric, plain numbers.
	want := []string{"ttfp", "ms", "10", "10", "126.2", "126.2", "0", "false", "1", "1", "exact with ties", "1", ""}
	if len(recs) != 7 || strings.Join(recs[0], ",") != "metric,unit,n_a,n_b,mean_a,mean_b,delta_pct,significant,welch_p,utest_p,utest_method,holm_p,mde_pct" ||
		strings.Join(recs[1][:12], ",") != strings.Join(want[:12], ",") {
		t.Errorf("csv = %q", recs)
	}
	if err := res.Write(&buf, "yaml"); err == nil {
		t.Error("format yaml accepted")
	}
}

func TestGates(t *testing.T) {
	for in, want := range map[string]Gate{
		"ttfp:5":            {"ttfp", 5},
		"e2e:10":            {"e2e", 10},
		"RTF-E2E:2.5%":      {"rtf_e2e", 2.5},
		"audio_duration:0":  {"audio_duration", 0},
		" underrun : 12.5 ": {"underrun", 12.5},
	} {
		got, err := ParseGate(in)
		if err != nil || got != want {
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, wantErr := range map[string]string{
		"ttfp":      "want METRIC:PCT",
		"latency:5": `unknown metric "latency" (want one of ttfp, ttft, e2e, rtf_last_chunk, rtf_e2e, underrun, audio_duration, wer)`,
		"ttfp:x":    `percentage "x"`,
		"ttfp:-1":   `percentage "-1"`,
		"ttfp:NaN":  `percentage "NaN"`,
	} {
		if _, err := ParseGate(in); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseGate(%q) error = %v, want it to contain %q", in, err, wantErr)
		}
	}
	if g := (Gate{"ttfp", 5}).String(); g != "ttfp:5" {
		t.Errorf("Gate.String = %q", g)
	}
}

func TestUntestableGateFails(t *testing.T) {
	base := load(t, "base.jsonl")
	// B with a single successful request: every row is untested.
	one := Run{Name: "one", Header: base.Header, Records: base.Records[1:2]}
	res, err := Compare(base, one, Options{Gates: []Gate{{"ttft", 5}, {"e2e", 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tested() != 0 {
		t.Errorf("tested = %d, want 0", res.Tested())
	}
	e2e := row(t, res, "e2e")
	if e2e.Tested || !math.IsNaN(e2e.HolmP) || e2e.B.N != 1 || !strings.Contains(strings.Join(e2e.Warnings, ";"), "not tested: A has 10 and B 1 samples") {
		t.Errorf("e2e row = %+v", e2e)
	}
	var re *RegressionError
	if err := res.Err(); !errors.As(err, &re) || len(re.Failed) != 2 {
		t.Fatalf("Err() = %v, want both gates failed", err)
	}
	if !strings.Contains(re.Failed[0].Reason, "no samples in either run") || !strings.Contains(re.Failed[1].Reason, "not tested") {
		t.Errorf("reasons = %q, %q", re.Failed[0].Reason, re.Failed[1].Reason)
	}
	var out bytes.Buffer
	if err := res.Write(&out, "table"); err != nil {
		t.Fatal(err)
	}
}

func TestCompareErrors(t *testing.T) {
	base := load(t, "base.jsonl")
	empty := Run{Name: "empty.jsonl", Header: base.Header, Records: base.Records[:1]} // only the warm-up
	if _, err := Compare(base, empty, Options{}); err == nil || !strings.Contains(err.Error(), "empty.jsonl (B): no measured request records (1 records, 1 warm-up)") {
		t.Errorf("err = %v", err)
	}
	if _, err := Compare(base, base, Options{Alpha: 2}); err == nil {
		t.Error("alpha 2 accepted")
	}
	if _, err := Compare(base, base, Options{Percentiles: []float64{101}}); err == nil {
		t.Error("percentile 101 accepted")
	}
	if _, err := Load("testdata/missing.jsonl"); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("Load(missing) = %v", err)
	}
}

func TestRunWarnings(t *testing.T) {
	a := results.Header{Scenario: "x", Mode: "closed", Concurrency: 2}
	b := results.Header{Scenario: "y", Mode: "closed", Concurrency: 4}
	got := strings.Join(runWarnings(a, b), "; ")
	if got != "runs differ in scenario (A x, B y); runs differ in concurrency (A 2, B 4)" {
		t.Errorf("runWarnings = %q", got)
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1234.56: "1235", 126.2: "126.2", 12.345: "12.35", 1.5: "1.500", 0.777: "0.7770",
		0.0001234: "0.000123", -3.5: "-3.500", math.NaN(): "-",
	} {
		if got := report.FormatValue(v); got != want {
			t.Errorf("report.FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
	for p, want := range map[float64]string{1: "1.000", 0.0312: "0.031", 4.4e-9: "4.4e-09", 0: "0.000", math.NaN(): "-"} {
		if got := report.FormatP(p); got != want {
			t.Errorf("report.FormatP(%v) = %q, want %q", p, got, want)
		}
	}
}

// TestAnalyzeUntestable checks Analyze's contract for a metric whose test
// fails: untested, the error among its warnings and returned, the other
// metrics still tested and Holm-adjusted.
func TestAnalyzeUntestable(t *testing.T) {
	var a, b []results.Record
	for i := 0; i < 4; i++ {
		f := float64(i)
		a = append(a, results.Record{Seq: i, Kind: results.KindSpeech, E2ES: 1 + f, TTFTS: 0.1 + f})
		b = append(b, results.Record{Seq: i, Kind: results.KindSpeech, E2ES: 1 + f, TTFTS: 0.2 + f})
	}
	b[2].E2ES = math.Inf(1)
	b = append(b, results.Record{Seq: 9, Warmup: true, E2ES: 5}, results.Record{Seq: 8, ErrorClass: results.ErrConnect})
	usedA, _, _, _ := Usable(a, false)
	usedB, failedB, warmupB, _ := Usable(b, false)
	if len(usedB) != 4 || len(failedB) != 1 || warmupB != 1 {
		t.Fatalf("Usable(b): %d used, %d failed, %d warm-up; want 4, 1, 1", len(usedB), len(failedB), warmupB)
	}
	rows, err := Analyze(Metrics(), usedA, usedB, stats.Options{})
	if err == nil || !strings.Contains(err.Error(), "metric e2e (e2e_s)") {
		t.Errorf("err = %v, want one about e2e", err)
	}
	if len(rows) != 2 || rows[0].Metric.Name != "ttft" || rows[1].Metric.Name != "e2e" {
		t.Fatalf("rows %+v, want ttft and e2e", rows)
	}
	ttft, e2e := rows[0], rows[1]
	if !ttft.Tested || ttft.HolmP != ttft.Comparison.P || len(ttft.SamplesA) != 4 {
		t.Errorf("ttft: tested %v holm p %v p %v samples %v", ttft.Tested, ttft.HolmP, ttft.Comparison.P, ttft.SamplesA)
	}
	if e2e.Tested || e2e.Significant || !math.IsNaN(e2e.HolmP) || len(e2e.Warnings) != 1 || !strings.HasPrefix(e2e.Warnings[0], "not tested: ") {
		t.Errorf("e2e: tested %v significant %v holm p %v warnings %q", e2e.Tested, e2e.Significant, e2e.HolmP, e2e.Warnings)
	}
}

func TestFormatDelta(t *testing.T) {
	for d, want := range map[float64]string{3.14159: "+3.14%", -2: "-2.00%", math.NaN(): "n/a", math.Inf(1): "+Inf"} {
		if got := FormatDelta(d); got != want {
			t.Errorf("FormatDelta(%v) = %q, want %q", d, got, want)
		}
	}
}

// withFailures returns base's records plus n failed (HTTP 503) measured
// requests.
func withFailures(base Run, name string, n int) Run {
	recs := append([]results.Record(nil), base.Records...)
	for i := 0; i < n; i++ {
		recs = append(recs, results.Record{Type: "request", Seq: 100 + i, Kind: results.KindSpeech, Status: 503,
			ErrorClass: results.ErrHTTPStatus, Error: "503 Service Unavailable", E2ES: 0.01})
	}
	return Run{Name: name, Header: base.Header, Records: recs}
}

func TestFailureRateGate(t *testing.T) {
	base := load(t, "base.jsonl") // 1 of 11 measured requests failed
	// B: base's records (10 successes, 1 failure) and 14 more failures:
	// 15 of 25. Fisher's exact p of [[1 10] [15 10]] is 2501/275094 =
	// 0.00909143783579431 (exact rational arithmetic, Python fractions and
	// math.comb: stats/testdata/fisher_ref.py).
	worse := withFailures(base, "worse", 14)
	res, err := Compare(base, worse, Options{Gates: []Gate{{Metric: "e2e", MaxPct: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failures
	if f.FailedA != 1 || f.TotalA != 11 || f.FailedB != 15 || f.TotalB != 25 || !near(f.P, 2501.0/275094, 1e-12) {
		t.Fatalf("failures %+v", f)
	}
	if len(res.Gates) != 2 || res.Gates[0].Failed || !res.Gates[1].Failed || res.Gates[1].Metric != FailureRateGate {
		t.Fatalf("gates %+v: want e2e ok and failure_rate failed", res.Gates)
	}
	var re *RegressionError
	if err := res.Err(); !errors.As(err, &re) || len(re.Failed) != 1 ||
		!strings.Contains(err.Error(), "failure_rate: B fails more often: 60.0% (15/25) vs A 9.1% (1/11), fisher p 0.00909") {
		t.Errorf("Err() = %v", err)
	}
	var out bytes.Buffer
	if err := res.Write(&out, report.FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failed requests: A 9.1% (1/11), B 60.0% (15/25); fisher exact p 0.00909", "gate failure_rate: FAIL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := res.Write(&out, report.FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures struct {
			FailedB int     `json:"failed_b"`
			RateB   float64 `json:"rate_b"`
			FisherP float64 `json:"fisher_p"`
		} `json:"failures"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Failures.FailedB != 15 || doc.Failures.RateB != 0.6 || doc.Failures.FisherP != f.P {
		t.Errorf("json failures %+v (%v)", doc.Failures, err)
	}

	// The reverse: A fails more; B is not a regression.
	res, err = Compare(worse, base, Options{Gates: []Gate{{Metric: "e2e", MaxPct: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err() != nil || !strings.Contains(res.Gates[1].Reason, "B fails less often") {
		t.Errorf("reverse: err %v, gate %+v", res.Err(), res.Gates[1])
	}
	// Within chance: one more failure in B (2 of 12 against 1 of 11) passes.
	res, err = Compare(base, withFailures(base, "one more", 1), Options{Gates: []Gate{{Metric: "e2e", MaxPct: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err() != nil || !strings.Contains(res.Gates[1].Reason, "no significant change") {
		t.Errorf("one more failure: err %v, gate %+v", res.Err(), res.Gates[1])
	}
	// No gate asked for: no failure-rate gate either, but the figures are there.
	res, _ = Compare(base, worse, Options{})
	if len(res.Gates) != 0 || res.Failures.FailedB != 15 {
		t.Errorf("without gates: %+v, failures %+v", res.Gates, res.Failures)
	}
}

// widest returns the widest line of s in runes (what a terminal shows).
func widest(s string) (int, string) {
	w, line := 0, ""
	for _, l := range strings.Split(s, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			w, line = n, l
		}
	}
	return w, line
}

// The default table fits in 100 columns on realistic runs, with gates, the
// failure-rate note and the percentile table.
func TestTableWidth(t *testing.T) {
	res, err := Compare(load(t, "base.jsonl"), load(t, "slower.jsonl"), Options{Gates: []Gate{{"ttfp", 5}, {"e2e", 50}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Write(&buf, report.FormatTable); err != nil {
		t.Fatal(err)
	}
	if w, line := widest(buf.String()); w > 100 {
		t.Errorf("widest line has %d columns:\n%s\n\nin\n%s", w, line, buf.String())
	}
}

// Every Mann-Whitney method is reported: in the JSON of each metric and in
// the notes under the table.
func TestMannWhitneyMethodReported(t *testing.T) {
	res, err := Compare(load(t, "base.jsonl"), load(t, "slower.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// base vs slower: distinct latencies (exact), underrun with repeated
	// zeros (exact with ties), audio duration all 2 s (all equal).
	want := map[string]stats.MannWhitneyMethod{"ttfp": stats.MWExact, "underrun": stats.MWExactTies, "audio_duration": stats.MWAllEqual}
	for name, m := range want {
		if got := row(t, res, name).Comparison.MannWhitneyMethod; got != m {
			t.Errorf("%s: method %q, want %q", name, got, m)
		}
		if got := row(t, res, name).JSON().MannWhitneyMethod; got != string(m) {
			t.Errorf("%s: JSON method %q, want %q", name, got, m)
		}
	}
	notes := strings.Join(res.Notes(), "\n")
	for _, line := range []string{"  exact: ttfp, e2e, rtf_last_chunk, rtf_e2e", "  exact with ties: underrun", "  none (all values equal): audio_duration"} {
		if !strings.Contains(notes, line) {
			t.Errorf("notes lack %q:\n%s", line, notes)
		}
	}
	// Beyond 50 values: the normal approximation.
	mk := func(name string, off float64) Run {
		var recs []results.Record
		for i := 0; i < 60; i++ {
			recs = append(recs, results.Record{Seq: i, Kind: results.KindChat, E2ES: 1 + off + float64(i)/100})
		}
		return Run{Name: name, Records: recs}
	}
	res, err = Compare(mk("a", 0), mk("b", 0.005), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := row(t, res, "e2e").Comparison.MannWhitneyMethod; got != stats.MWNormal ||
		!strings.Contains(strings.Join(res.Notes(), "\n"), "utest = Mann-Whitney U test, p normal approximation with tie and continuity corrections") {
		t.Errorf("60 values: method %q, notes %q", got, res.Notes())
	}
}

// lateRun is run's records as an open-loop run that measures from the
// intended start, every request sent lag seconds after it was due; the
// send-relative figures stay as they are.
func lateRun(run Run, name string, lag float64) Run {
	recs := append([]results.Record(nil), run.Records...)
	for i := range recs {
		recs[i].LatencyOrigin = results.OriginIntended
		recs[i].LagS = lag
		recs[i].IntendedS = recs[i].SentS - lag
	}
	h := run.Header
	h.Mode = "open"
	return Run{Name: name, Header: h, Records: recs}
}

// A run whose every request started 1 s late (coordinated omission) compares
// worse than the original: compare reads latencies from their origin.
func TestCompareLatencyOrigin(t *testing.T) {
	base := load(t, "base.jsonl")
	onTime, late := lateRun(base, "on time", 0), lateRun(base, "late", 1)
	res, err := Compare(onTime, late, Options{Gates: []Gate{{"e2e", 5}}})
	if err != nil {
		t.Fatal(err)
	}
	// ttfp mean 126.2 ms + 1000 ms; e2e 1564 + 1000 ms. Every value moved by
	// the same second, so the spread (and Welch's SE) is unchanged.
	for name, want := range map[string]float64{"ttfp": 1126.2, "e2e": 2564} {
		r := row(t, res, name)
		if !near(r.B.Mean*1000, want, 1e-9) || !r.Significant || !(r.Comparison.DeltaPct > 50) {
			t.Errorf("%s: B mean %v ms (want %v), significant %v, delta %v", name, r.B.Mean*1000, want, r.Significant, r.Comparison.DeltaPct)
		}
	}
	if r := row(t, res, "rtf_e2e"); r.Significant {
		t.Errorf("rtf_e2e changed: %+v", r.Comparison)
	}
	var re *RegressionError
	if err := res.Err(); !errors.As(err, &re) || re.Failed[0].Metric != "e2e" {
		t.Errorf("Err() = %v, want the e2e gate failed", err)
	}
	// The same late run measured from the send compares equal: the origin
	// is what makes the difference.
	sendLate := lateRun(base, "late, from send", 1)
	for i := range sendLate.Records {
		sendLate.Records[i].LatencyOrigin = results.OriginSend
	}
	res, err = Compare(onTime, sendLate, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, res, "e2e"); r.Significant || r.B.Mean != r.A.Mean {
		t.Errorf("from send: e2e %v vs %v, significant %v", r.A.Mean, r.B.Mean, r.Significant)
	}
}

func TestFormatDeltaResidue(t *testing.T) {
	for in, want := range map[float64]string{-8.88e-16: "0.00%", 1e-15: "0.00%", -0.004: "0.00%", 0.006: "+0.01%", -3.14159: "-3.14%", math.NaN(): "n/a"} {
		if got := FormatDelta(in); got != want {
			t.Errorf("FormatDelta(%v) = %q, want %q", in, got, want)
		}
	}
}

// A candidate whose every measured request failed is no unusable input:
// without gates it is "nothing measured", with gates a regression.
func TestCompareCandidateOnlyFailed(t *testing.T) {
	base := load(t, "base.jsonl")
	var failed []results.Record
	for _, r := range withFailures(base, "x", 12).Records {
		if !r.OK() {
			failed = append(failed, r)
		}
	}
	broken := Run{Name: "broken", Header: base.Header, Records: failed} // 13 failures, nothing else
	if _, err := Compare(base, broken, Options{}); !errors.Is(err, ErrNothingMeasured) {
		t.Errorf("without gates: error %v, want ErrNothingMeasured", err)
	}
	res, err := Compare(base, broken, Options{Gates: []Gate{{"e2e", 50}}})
	if err != nil {
		t.Fatal(err)
	}
	var re *RegressionError
	if err := res.Err(); !errors.As(err, &re) || len(re.Failed) != 2 || re.Failed[1].Metric != FailureRateGate {
		t.Fatalf("Err() = %v, want the e2e gate (not tested) and the failure-rate gate failed", err)
	}
	var buf bytes.Buffer
	if err := res.Write(&buf, report.FormatTable); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "failed requests: A 9.1% (1/11), B 100.0% (13/13)") {
		t.Errorf("table:\n%s", buf.String())
	}
	// A baseline that only failed is still nothing to compare against.
	if _, err := Compare(broken, base, Options{Gates: []Gate{{"e2e", 50}}}); !errors.Is(err, ErrNothingMeasured) {
		t.Errorf("broken baseline: error %v", err)
	}
}

// saturated is run as measured by a saturated load generator.
func saturated(run Run) Run {
	run.Header.Client = &results.ClientHealth{Saturated: true, ClientDelayMS: 42, Reasons: []string{"CPU 97 % of 2 cores > 80 %"}}
	return run
}

func TestSaturatedRunRefusesTheGates(t *testing.T) {
	gates := []Gate{{Metric: "e2e", MaxPct: 50}}
	base, same := load(t, "base.jsonl"), load(t, "same.jsonl")

	// Without gates the comparison is reported, the saturated side marked.
	res, err := Compare(base, saturated(same), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Errorf("without gates: Err = %v", err)
	}
	notes := strings.Join(res.Notes(), "\n")
	if !strings.Contains(notes, "B: 10 of 10 requests compared (0 failed, 0 warm-up left out); SATURATED load generator") ||
		!strings.Contains(notes, "the load generator was saturated (CPU 97 % of 2 cores > 80 %): latencies include up to 42.0 ms") {
		t.Errorf("notes do not mark B:\n%s", notes)
	}
	var js bytes.Buffer
	if err := res.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"client_saturated": true`) {
		t.Errorf("json does not carry client_saturated:\n%s", js.String())
	}

	// With gates the verdict is refused, naming the side and the reason,
	// also when A is the saturated one and no gate failed.
	for _, tc := range []struct{ a, b Run }{{base, saturated(same)}, {saturated(base), same}} {
		res, err := Compare(tc.a, tc.b, Options{Gates: gates})
		if err != nil {
			t.Fatal(err)
		}
		err = res.Err()
		if !errors.Is(err, ErrSaturated) || !strings.Contains(err.Error(), "CPU 97 %") || !strings.Contains(err.Error(), "--allow-saturated") {
			t.Errorf("Err = %v, want a refusal wrapping ErrSaturated", err)
		}
		// Every output shows the refusal, none the gates' verdicts.
		notes := strings.Join(res.Notes(), "\n")
		if !strings.Contains(notes, "gates: compare: no gate verdict: ") || strings.Contains(notes, "gate e2e:50: ok") {
			t.Errorf("notes show the refused gates:\n%s", notes)
		}
		var js bytes.Buffer
		if err := res.Write(&js, "json"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(js.String(), `"refused": "compare: no gate verdict: `) || strings.Contains(js.String(), `"gates"`) ||
			!strings.Contains(js.String(), `"regression": false`) {
			t.Errorf("json shows the refused gates:\n%s", js.String())
		}
		res, err = Compare(tc.a, tc.b, Options{Gates: gates, AllowSaturated: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Errorf("--allow-saturated: Err = %v, want the gates' verdict (none failed)", err)
		}
	}

	// A run that was not saturated, or whose file has no verdict, is judged.
	notSat := base
	notSat.Header.Client = &results.ClientHealth{ClientDelayMS: 0.2}
	res, err = Compare(notSat, same, Options{Gates: gates})
	if err != nil || res.Err() != nil {
		t.Errorf("unsaturated: %v, %v", err, res.Err())
	}
}

func TestRampRecordsLeftOut(t *testing.T) {
	base, same := load(t, "base.jsonl"), load(t, "same.jsonl")
	ramped := same
	ramped.Records = slices.Clone(same.Records)
	// Three ramp records, much slower than the rest: kept, they move e2e.
	for i := range 3 {
		r := ramped.Records[i]
		r.ID, r.Seq, r.Phase, r.E2ES = fmt.Sprintf("ramp-%d", i), -10+i, "ramp", 100
		ramped.Records = append(ramped.Records, r)
	}
	res, err := Compare(base, ramped, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.B.Used != 10 || res.B.Ramp != 3 || row(t, res, "e2e").B.Mean != row(t, mustCompare(t, base, same, Options{}), "e2e").B.Mean {
		t.Errorf("default: B used %d, ramp %d; e2e mean %v", res.B.Used, res.B.Ramp, row(t, res, "e2e").B.Mean)
	}
	if !strings.Contains(strings.Join(res.Notes(), "\n"), "3 ramp-phase left out (--include-ramp keeps them)") {
		t.Errorf("notes do not say the ramp was left out:\n%s", strings.Join(res.Notes(), "\n"))
	}
	res, err = Compare(base, ramped, Options{IncludeRamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.B.Used != 13 || res.B.Ramp != 0 || row(t, res, "e2e").B.N != 13 {
		t.Errorf("--include-ramp: B used %d, ramp %d, e2e n %d", res.B.Used, res.B.Ramp, row(t, res, "e2e").B.N)
	}
}

func mustCompare(t *testing.T, a, b Run, opts Options) *Result {
	t.Helper()
	res, err := Compare(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A chat run compared with a speech run: the latencies measure different
// work, and the warnings say so.
func TestCompareWarnsOfDifferentKinds(t *testing.T) {
	base := load(t, "base.jsonl")
	chat := Run{Name: "chat", Header: base.Header, Records: append([]results.Record(nil), base.Records...)}
	for i := range chat.Records {
		chat.Records[i].Kind = results.KindChat
	}
	speech := Run{Name: "speech", Header: base.Header, Records: append([]results.Record(nil), base.Records...)}
	for i := range speech.Records {
		speech.Records[i].Kind = results.KindSpeech
	}
	res := mustCompare(t, chat, speech, Options{})
	want := "runs sent different request kinds (A chat, B speech)"
	if !strings.Contains(strings.Join(res.Warnings, "\n"), want) {
		t.Errorf("warnings %q lack %q", res.Warnings, want)
	}
	if res := mustCompare(t, chat, chat, Options{}); slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "request kinds") }) {
		t.Errorf("the same kinds warned of: %q", res.Warnings)
	}
}
