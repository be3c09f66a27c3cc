package slo

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/spelling"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		expr   string
		figure string
		op     string
		value  float64
		unit   string
	}{
		{"audio_ttfp_p95<500ms", "audio_ttfp_p95", "<", 500, "ms"},
		{"  audio_ttfp_p95 < 500 ms ", "audio_ttfp_p95", "<", 500, "ms"},
		{"audio_ttfp_p95\t<=\t500ms", "audio_ttfp_p95", "<=", 500, "ms"},
		{"audio_ttfp_p95<0.5s", "audio_ttfp_p95", "<", 500, "ms"},
		{"audio_ttfp_p95<250us", "audio_ttfp_p95", "<", 0.25, "ms"},
		{"audio_ttfp_p95<250µs", "audio_ttfp_p95", "<", 0.25, "ms"}, // U+00B5 micro sign
		{"audio_ttfp_p95<250μs", "audio_ttfp_p95", "<", 0.25, "ms"}, // U+03BC Greek mu
		{"audio_ttfp_p95<1e6ns", "audio_ttfp_p95", "<", 1, "ms"},
		{"audio_ttfp_p95<1E+3ms", "audio_ttfp_p95", "<", 1000, "ms"},
		{"ttfp_p95<500ms", "audio_ttfp_p95", "<", 500, "ms"},
		{"TTFP_P95<500ms", "audio_ttfp_p95", "<", 500, "ms"},
		{"e2e_p99<=1m", "e2e_p99", "<=", 60000, "ms"},
		{"e2el_p99 >= 2s", "e2e_p99", ">=", 2000, "ms"},
		{"e2e_p095<1s", "e2e_p95", "<", 1000, "ms"},
		{"e2e_p50.0<1s", "e2e_p50", "<", 1000, "ms"},
		{"audio_ttfp_p99.9<1s", "audio_ttfp_p99.9", "<", 1000, "ms"},
		{"audio_ttfp_p100<1s", "audio_ttfp_p100", "<", 1000, "ms"},
		{"audio_ttfp_p0>=1ms", "audio_ttfp_p0", ">=", 1, "ms"},
		{"ttft_median<300ms", "ttft_median", "<", 300, "ms"},
		{"itl_std<20ms", "itl_std", "<", 20, "ms"},
		{"schedule_lag_p99<10ms", "schedule_lag_p99", "<", 10, "ms"},
		{"schedule_lag_mean>-1ms", "schedule_lag_mean", ">", -1, "ms"},
		{"stamp_delay_max<5ms", "stamp_delay_max", "<", 5, "ms"},
		{"audio_underrun_max<200ms", "audio_underrun_max", "<", 0.2, "s"},
		{"underrun_p99<=0.1s", "audio_underrun_p99", "<=", 0.1, "s"},
		{"audio_duration_min>=1s", "audio_duration_min", ">=", 1, "s"},
		{"audio_duration_max<2m", "audio_duration_max", "<", 120, "s"},
		{"rtf_last_chunk_p50<1", "rtf_last_chunk_p50", "<", 1, ""},
		{"rtf_e2e_mean<=0.5", "rtf_e2e_mean", "<=", 0.5, ""},
		{"rtf_server_max<1", "rtf_server_max", "<", 1, ""},
		{"audio_rtf_p99<1", "audio_rtf_p99", "<", 1, ""},
		{"continuity_ok_rate>=0.99", "continuity_ok_rate", ">=", 0.99, ""},
		{"continuity_ok_rate>=99%", "continuity_ok_rate", ">=", 0.99, ""},
		{"continuity_ok_rate >= 99 %", "continuity_ok_rate", ">=", 0.99, ""},
		{"continuity_ok_rate_200ms>=0.95", "continuity_ok_rate_200ms", ">=", 0.95, ""},
		{"continuity_ok_rate_0100ms>=1", "continuity_ok_rate_100ms", ">=", 1, ""},
		{"error_rate<0.01", "error_rate", "<", 0.01, ""},
		{"error_rate<1%", "error_rate", "<", 0.01, ""},
		{"error_rate<=0", "error_rate", "<=", 0, ""},
		{"errors==0", "errors", "==", 0, ""},
		{"completed>=100", "completed", ">=", 100, ""},
		{"request_throughput>2.5", "request_throughput", ">", 2.5, ""},
		{"audio_throughput>=1e1", "audio_throughput", ">=", 10, ""},
		{"goodput_rate>1", "goodput_rate", ">", 1, ""},
		{"goodput_share>=.9", "goodput_share", ">=", 0.9, ""},
		{"stall_rate<=5%", "stall_rate", "<=", 0.05, ""},
		{"stall_rate<1.", "stall_rate", "<", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if s.Expr != tt.expr || s.Figure != tt.figure || s.Op != tt.op || s.Value != tt.value || s.Unit != tt.unit {
				t.Errorf("Parse = {%q %q %q %v %q}, want {%q %q %q %v %q}",
					s.Expr, s.Figure, s.Op, s.Value, s.Unit, tt.expr, tt.figure, tt.op, tt.value, tt.unit)
			}
			// The canonical form parses back to the same SLO.
			again, err := Parse(s.String())
			if err != nil {
				t.Fatalf("Parse(String() = %q): %v", s.String(), err)
			}
			again.Expr = s.Expr
			if again != s {
				t.Errorf("Parse(%q) = %+v, want %+v", s.String(), again, s)
			}
		})
	}
}

func TestParseResolvesFigure(t *testing.T) {
	for expr, want := range map[string]figure{
		"e2el_p99.9<1s":                 {name: "e2e_p99.9", kind: kindTime, unit: "ms", metric: 2, stat: "p", p: 99.9},
		"underrun_std<1ms":              {name: "audio_underrun_std", kind: kindTime, unit: "s", metric: 9, stat: "std"},
		"audio_rtf_median<1":            {name: "audio_rtf_median", kind: kindPlain, metric: 7, stat: "median"},
		"continuity_ok_rate>0.5":        {name: "continuity_ok_rate", kind: kindRate, metric: -1, scalar: figContinuity, thMS: 100},
		"continuity_ok_rate_250ms>0.5":  {name: "continuity_ok_rate_250ms", kind: kindRate, metric: -1, scalar: figContinuity, thMS: 250},
		"continuity_ok_rate_0ms>0.5":    {name: "continuity_ok_rate_0ms", kind: kindRate, metric: -1, scalar: figContinuity, thMS: 0},
		"completed>1":                   {name: "completed", kind: kindPlain, metric: -1, scalar: figCompleted},
		"goodput_share>1%":              {name: "goodput_share", kind: kindRate, metric: -1, scalar: figGoodputShare},
		"request_throughput>1":          {name: "request_throughput", kind: kindPlain, metric: -1, scalar: figRequestRate},
		"stamp_delay_p50<1ms":           {name: "stamp_delay_p50", kind: kindTime, unit: "ms", metric: 11, stat: "p", p: 50},
		"ERROR_RATE<0.5":                {name: "error_rate", kind: kindRate, metric: -1, scalar: figErrorRate},
		"rtf_last_chunk_p99.99<1":       {name: "rtf_last_chunk_p99.99", kind: kindPlain, metric: 4, stat: "p", p: 99.99},
		"audio_duration_p1>=0.5s":       {name: "audio_duration_p1", kind: kindTime, unit: "s", metric: 8, stat: "p", p: 1},
		"audio_throughput>=1":           {name: "audio_throughput", kind: kindPlain, metric: -1, scalar: figAudioThroughput},
		"schedule_lag_p90<1ms":          {name: "schedule_lag_p90", kind: kindTime, unit: "ms", metric: 10, stat: "p", p: 90},
		"rtf_server_min>0":              {name: "rtf_server_min", kind: kindPlain, metric: 6, stat: "min"},
		"itl_max<1s":                    {name: "itl_max", kind: kindTime, unit: "ms", metric: 3, stat: "max"},
		"ttft_mean<1s":                  {name: "ttft_mean", kind: kindTime, unit: "ms", metric: 1, stat: "mean"},
		"rtf_e2e_p50<1":                 {name: "rtf_e2e_p50", kind: kindPlain, metric: 5, stat: "p", p: 50},
		"audio_ttfp_median<1s":          {name: "audio_ttfp_median", kind: kindTime, unit: "ms", metric: 0, stat: "median"},
		"stall_rate<0.1":                {name: "stall_rate", kind: kindRate, metric: -1, scalar: figStallRate},
		"goodput_rate>0":                {name: "goodput_rate", kind: kindPlain, metric: -1, scalar: figGoodputRate},
		"errors<1":                      {name: "errors", kind: kindPlain, metric: -1, scalar: figErrors},
		"continuity_ok_rate_1000ms>0.5": {name: "continuity_ok_rate_1000ms", kind: kindRate, metric: -1, scalar: figContinuity, thMS: 1000},
	} {
		s, err := Parse(expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
			continue
		}
		if s.fig != want {
			t.Errorf("Parse(%q).fig = %+v, want %+v", expr, s.fig, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		expr   string
		column int // 0-based, in runes
		msg    string
	}{
		{"audio_ttfp_p95<<500ms", 15, "expected a number"},
		{"", 0, "empty expression"},
		{"   ", 3, "empty expression"},
		{"<500ms", 0, "expected a figure name"},
		{"9lives<1", 0, "expected a figure name"},
		{"audio_ttfp_p95", 14, "expected an operator (<, <=, >, >=, ==) after audio_ttfp_p95"},
		{"audio_ttfp_p95 500ms", 15, "expected an operator"},
		{"audio-ttfp_p95<500ms", 5, `unexpected '-' in a figure name`},
		{"audio_ttfp_p95µ<500ms", 14, `unexpected 'µ' in a figure name`},
		{"audio_ttfp_p95=500ms", 14, `a single "=" is not an operator`},
		{"audio_ttfp_p95=<500ms", 14, `"=<" is not an operator: did you mean "<="?`},
		{"audio_ttfp_p95 => 500ms", 15, `"=>" is not an operator: did you mean ">="?`},
		{"audio_ttfp_p95!=500ms", 14, `"!=" is not supported`},
		{"audio_ttfp_p95≤500ms", 14, `write "≤" as "<="`},
		{"audio_ttfp_p95<", 15, "expected a number"},
		{"audio_ttfp_p95 < ms", 17, "expected a number"},
		{"audio_ttfp_p95<-ms", 15, "expected a number"},
		{"audio_ttfp_p95<.ms", 15, "expected a number"},
		{"audio_ttfp_p95<1e", 17, "expected the exponent's digits"},
		{"audio_ttfp_p95<1e+ms", 18, "expected the exponent's digits"},
		{"audio_ttfp_p95<500", 18, "audio_ttfp_p95 is a time: give a unit, e.g. 500ms"},
		{"audio_ttfp_p95 < 500 ", 20, "audio_ttfp_p95 is a time: give a unit, e.g. 500ms"},
		{"underrun_max<0.2", 16, "audio_underrun_max is a time: give a unit, e.g. 0.2ms"},
		{"audio_ttfp_p95<500%", 18, "is a time: give a time unit (ns, us, ms, s or m), not %"},
		{"audio_ttfp_p95<500xs", 18, `unknown unit "xs"`},
		{"audio_ttfp_p95<500 h", 19, `unknown unit "h"`},
		{"audio_ttfp_p95<500 ms extra", 22, `unexpected 'e' after the value`},
		{"audio_ttfp_p95<500ms5", 20, `unexpected '5' after the value`},
		{"audio_ttfp_p95<1.2.3ms", 18, `unexpected '.' after the value`},
		{"audio_ttfp_p95<1e400ms", 15, "number 1e400 is out of range"},
		{"e2e_p99<1e308m", 8, "number 1e308m is out of range"},
		{"rtf_last_chunk_p50<1s", 20, `rtf_last_chunk_p50 is a plain number: drop the unit "s"`},
		{"errors<1%", 8, `errors is a plain number: drop the unit "%"`},
		{"continuity_ok_rate>=99", 20, "continuity_ok_rate is a fraction between 0 and 1 (or 0% and 100%), got 99"},
		{"continuity_ok_rate>=101%", 20, "got 101%"},
		{"continuity_ok_rate>=0.9ms", 23, `continuity_ok_rate is a fraction (0.99 or 99%): drop the unit "ms"`},
		{"error_rate<-0.1", 11, "error_rate is a fraction between 0 and 1"},
		{"continuity_ok_rate_200>=0.9", 19, "want continuity_ok_rate_<N>ms"},
		{"continuity_ok_rate_0.2s>=0.9", 19, "want continuity_ok_rate_<N>ms"},
		{"continuity_ok_rate_+5ms>=0.9", 19, "unexpected '+' in a figure name"},
		{"continuity_ok_rate_ms>=0.9", 19, "want continuity_ok_rate_<N>ms"},
		{"audio_ttfp<500ms", 10, "audio_ttfp is a distribution: add a statistic, e.g. audio_ttfp_p95 or audio_ttfp_mean"},
		{"underrun < 1s", 8, "underrun is a distribution: add a statistic, e.g. audio_underrun_p95"},
		{"audio_ttfp_avg<500ms", 11, `unknown statistic "avg"`},
		{"audio_ttfp_p<1s", 11, `unknown statistic "p"`},
		{"audio_ttfp_p9x<1s", 11, `unknown statistic "p9x"`},
		{"audio_ttfp_p101<1s", 11, "percentile 101 is outside 0 to 100"},
		{"audio_tffp_p95<500ms", 0, `unknown figure "audio_tffp_p95": did you mean "audio_ttfp_p95"?`},
		{"  Audio_TFFP_p95<500ms", 2, `unknown figure "Audio_TFFP_p95": did you mean "audio_ttfp_p95"?`},
		{"zzzzzzzzzz<1", 0, `unknown figure "zzzzzzzzzz" (want METRIC_STAT such as audio_ttfp_p95, or one of continuity_ok_rate, error_rate`},
		// Columns count characters, not bytes: µ is two bytes.
		{"e2e_p99 < 5µs x", 14, `unexpected 'x' after the value`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Parse(tt.expr)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v, want a *ParseError", tt.expr, err)
			}
			if pe.Column != tt.column || !strings.Contains(pe.Msg, tt.msg) || pe.Expr != tt.expr || pe.Source != "--slo" {
				t.Errorf("Parse(%q) = column %d %q, want column %d containing %q", tt.expr, pe.Column, pe.Msg, tt.column, tt.msg)
			}
			if n := utf8.RuneCountInString(tt.expr); pe.Column < 0 || pe.Column > n {
				t.Errorf("column %d outside the expression (%d characters)", pe.Column, n)
			}
		})
	}
}

func TestParseErrorString(t *testing.T) {
	_, err := Parse("audio_ttfp_p95<<500ms")
	want := `--slo "audio_ttfp_p95<<500ms": column 16: expected a number` + "\n" +
		"  audio_ttfp_p95<<500ms\n" +
		"                 ^"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}

	// Tabs are kept in the caret line so the caret stays aligned; the
	// column counts characters, so µ (two bytes) is one column.
	_, err = Parse("e2e_p99\t<µ")
	want = `--slo "e2e_p99\t<µ": column 10: expected a number` + "\n" +
		"  e2e_p99\t<µ\n" +
		"         \t ^"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%q\nwant\n%q", err, want)
	}

	// A control character cannot break the picture.
	_, err = Parse("e2e_p99<1s\nx")
	want = `--slo "e2e_p99<1s\nx": column 12: unexpected 'x' after the value` + "\n" +
		"  e2e_p99<1s\uFFFDx\n" +
		"             ^"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%q\nwant\n%q", err, want)
	}

	// The caret can stand just past the end.
	_, err = Parse("errors<")
	want = `--slo "errors<": column 8: expected a number` + "\n" +
		"  errors<\n" +
		"         ^"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%q\nwant\n%q", err, want)
	}
}

// The examples of docs/slo.md ("Errors point at the input"), verbatim.
func TestREADMEExamples(t *testing.T) {
	for expr, want := range map[string]string{
		"p99_audio_ttfp_ms<500ms": `--slo "p99_audio_ttfp_ms<500ms": column 1: unknown figure "p99_audio_ttfp_ms": did you mean "audio_ttfp_p99"?` + "\n" +
			"  p99_audio_ttfp_ms<500ms\n" +
			"  ^",
		"audio_ttfp_p95<500": `--slo "audio_ttfp_p95<500": column 19: audio_ttfp_p95 is a time: give a unit, e.g. 500ms` + "\n" +
			"  audio_ttfp_p95<500\n" +
			"                    ^",
	} {
		if _, err := Parse(expr); err == nil || err.Error() != want {
			t.Errorf("error =\n%v\nwant\n%s", err, want)
		}
	}
	r := judge(mustParse(t, "continuity_ok_rate>=0.99"), 0.995, "")
	if want := "continuity_ok_rate = 0.995, limit >= 0.99: ok, 0.005 to spare (0.5%)"; r.Message != want {
		t.Errorf("got %q, want %q", r.Message, want)
	}
}

func TestParseFrom(t *testing.T) {
	_, err := ParseFrom("ci.yaml: slos[1]", "e2e_p99<1")
	if err == nil || !strings.HasPrefix(err.Error(), `ci.yaml: slos[1] "e2e_p99<1": column 10: e2e_p99 is a time`) {
		t.Errorf("error = %v", err)
	}
}

func TestParseAll(t *testing.T) {
	slos, err := ParseAll([]string{"e2e_p99<1s", "errors==0"})
	if err != nil || len(slos) != 2 || slos[0].Figure != "e2e_p99" || slos[1].Figure != "errors" {
		t.Fatalf("ParseAll = %+v, %v", slos, err)
	}
	slos, err = ParseAll([]string{"e2e_p99<1", "errors==0", "ttfp_p9<<1s"})
	if err == nil || slos != nil {
		t.Fatalf("ParseAll with bad expressions = %+v, %v", slos, err)
	}
	// Every bad expression is reported, in order.
	msg := err.Error()
	if i, j := strings.Index(msg, `"e2e_p99<1"`), strings.Index(msg, `"ttfp_p9<<1s"`); i < 0 || j < i {
		t.Errorf("error does not name both bad expressions in order:\n%s", msg)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Expr != "e2e_p99<1" {
		t.Errorf("errors.As finds %+v, want the first bad expression", pe)
	}
	if slos, err := ParseAll(nil); err != nil || len(slos) != 0 {
		t.Errorf("ParseAll(nil) = %v, %v", slos, err)
	}
}

func TestSuggest(t *testing.T) {
	for in, want := range map[string]string{
		"audio_tffp_p95":           "audio_ttfp_p95",
		"audio_ttfp_p95_ms":        "audio_ttfp_p95",
		"audo_ttfp_p97":            "audio_ttfp_p97", // keeps the asked-for percentile
		"p99_audio_ttfp_ms":        "audio_ttfp_p99", // vLLM-Omni benchmark key
		"mean_e2el_ms":             "e2e_mean",
		"median_audio_rtf":         "audio_rtf_median",
		"ttfp_ms_p97":              "audio_ttfp_p97", // summary metric name
		"audio_underrun_s_max":     "audio_underrun_max",
		"continuty_ok_rate":        "continuity_ok_rate",
		"audio_continuity_ok_rate": "continuity_ok_rate",
		"request_goodput":          "goodput_rate",
		"failed":                   "errors",
		"eror_rate":                "error_rate",
		"rtf_lastchunk_p50":        "rtf_last_chunk_p50",
		"request_throughtput":      "request_throughput",
		"stall_rat":                "stall_rate",
		"zzzzzzzzzz":               "",
		"latency_p95":              "",
	} {
		if got := suggest(in); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"audio_tffp", "audio_ttfp", 1},
		{"ab", "ba", 2}, // no transpositions: plain Levenshtein
		{"µs", "us", 1}, // runes, not bytes
	} {
		if got := spelling.Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("spelling.Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestConvert(t *testing.T) {
	for _, tt := range []struct {
		v, from, to, want float64
	}{
		{250, 1e3, 1e6, 0.25}, // 250 us in ms
		{0.5, 1e9, 1e6, 500},  // 0.5 s in ms
		{1, 60e9, 1e6, 60000}, // 1 m in ms
		{1, 60e9, 1e9, 60},    // 1 m in s
		{1e6, 1, 1e6, 1},      // 1e6 ns in ms
		{200, 1e6, 1e9, 0.2},  // 200 ms in s, exactly the literal 0.2
		{100, 1e6, 1e9, 0.1},
		{7, 1e6, 1e6, 7},
	} {
		if got := convert(tt.v, tt.from, tt.to); got != tt.want {
			t.Errorf("convert(%v, %v, %v) = %v, want exactly %v", tt.v, tt.from, tt.to, got, tt.want)
		}
	}
}

func TestFigures(t *testing.T) {
	figs := Figures()
	for _, want := range []string{"continuity_ok_rate", "continuity_ok_rate_<N>ms", "error_rate", "audio_ttfp_<stat>", "rtf_last_chunk_<stat>"} {
		found := false
		for _, f := range figs {
			found = found || f == want
		}
		if !found {
			t.Errorf("Figures() lacks %q: %v", want, figs)
		}
	}
	// Every concrete figure the suggestions offer must parse.
	for _, c := range canonicalCandidates() {
		if _, err := Parse(c + ">0" + map[bool]string{true: "ms", false: ""}[needsUnit(c)]); err != nil {
			t.Errorf("candidate %q does not parse: %v", c, err)
		}
	}
}

func needsUnit(name string) bool {
	if f, ok, _ := (&parser{}).resolveServer(name, 0); ok {
		return f.kind == kindTime
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		if m := lookupMetric(name[:i]); m >= 0 {
			return metrics[m].unit != ""
		}
	}
	return false
}

// FuzzParse checks that Parse never panics, that every error points inside
// (or just past) the expression, and that what parses round-trips through
// String.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"audio_ttfp_p95<500ms", "continuity_ok_rate>=99%", "error_rate<0.01", "rtf_last_chunk_p50<1",
		`server_stage_queue_p95{stage="1"}<50ms`, "replica_imbalance<1.5",
		"audio_ttfp_p95<<500ms", "e2e_p99.9 <= 1.5e3 µs", "continuity_ok_rate_200ms>=.9", "x", "",
		"underrun_max<1e308m", "audio_ttfp_p101<1s", "errors==0", "\t\n", "e2e_p99<1s\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %v is not a *ParseError", expr, err)
			}
			if n := utf8.RuneCountInString(expr); pe.Column < 0 || pe.Column > n {
				t.Fatalf("Parse(%q): column %d outside 0..%d", expr, pe.Column, n)
			}
			_ = pe.Error()
			return
		}
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", expr, s.String(), err)
		}
		again.Expr = s.Expr
		if again != s {
			t.Fatalf("round trip of %q: %+v, want %+v", expr, again, s)
		}
	})
}
