package check

import (
	"regexp"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/scrape"
)

// editLines applies fn to every line; fn returns the replacement lines
// (none to drop the line).
func editLines(text string, fn func(line string) []string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		out = append(out, fn(l)...)
	}
	return strings.Join(out, "\n")
}

func replaceLine(t *testing.T, text string, re string, with string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	n := 0
	out := editLines(text, func(l string) []string {
		if rx.MatchString(l) {
			n++
			if with == "" {
				return nil
			}
			return []string{rx.ReplaceAllString(l, with)}
		}
		return []string{l}
	})
	if n == 0 {
		t.Fatalf("no line matches %s", re)
	}
	return out
}

func TestProfilePassesOnTheMetricCore(t *testing.T) {
	for _, stats := range []bool{true, false} {
		for _, accept := range []scrape.Accept{scrape.AcceptProto, scrape.AcceptOpenMetrics, scrape.AcceptText} {
			fs, err := exposition(t, metricsCore(t, stats), accept).Families()
			if err != nil {
				t.Fatal(err)
			}
			rep := Evaluate(Input{After: fs}, profileRules(t))
			if !rep.OK() {
				t.Errorf("stats=%v accept=%v: profile fails on the metric core:\n%s", stats, accept, failures(rep))
			}
			wantStats := map[bool]string{true: "on", false: "off"}[stats]
			if !strings.HasPrefix(rep.Stats, wantStats) {
				t.Errorf("stats=%v: detected %q", stats, rep.Stats)
			}
			if rep.Passed < 30 {
				t.Errorf("stats=%v: only %d rules passed", stats, rep.Passed)
			}
		}
	}
}

// TestProfileViolations breaks a good exposition in one way at a time and
// checks that exactly the rule about that breaks.
func TestProfileViolations(t *testing.T) {
	good := textExposition(t, metricsCore(t, true))
	const ttfpBucket = `^vllm:omni_audio_ttfp_s_bucket\{.*le="%s"\}.*$`
	cases := []struct {
		name  string
		edit  func(t *testing.T, s string) string
		stats StatsMode
		fail  []string // rules that must fail
	}{
		{"missing family", func(t *testing.T, s string) string {
			return replaceLine(t, s, `vllm:omni_audio_rtf[ _]`, "")
		}, StatsAuto, []string{"audio_rtf: exists"}},
		{"wrong type", func(t *testing.T, s string) string {
			return replaceLine(t, s, `^# TYPE vllm:omni_audio_frames_total counter$`, "# TYPE vllm:omni_audio_frames_total gauge")
		}, StatsAuto, []string{"audio_frames_total: type", "naming conventions", "promlint"}},
		{"wrong labels", func(t *testing.T, s string) string {
			return replaceLine(t, s, `^(vllm:omni_audio_frames_total\{.*)stage=`, "${1}engine=")
		}, StatsAuto, []string{"audio_frames_total: labels"}},
		{"wrong buckets", func(t *testing.T, s string) string {
			return replaceLine(t, s, strings.Replace(ttfpBucket, "%s", "0.25", 1), "")
		}, StatsAuto, []string{"audio_ttfp_s: buckets"}},
		{"missing +Inf", func(t *testing.T, s string) string {
			return replaceLine(t, s, strings.Replace(ttfpBucket, "%s", `\+Inf`, 1), "")
		}, StatsAuto, []string{"audio_ttfp_s: buckets", "histogram invariants"}},
		{"+Inf differs from _count", func(t *testing.T, s string) string {
			return replaceLine(t, s, `^(vllm:omni_e2e_request_latency_s_count\{.*\}) 3$`, "${1} 5")
		}, StatsAuto, []string{"histogram invariants"}},
		{"buckets not cumulative", func(t *testing.T, s string) string {
			return replaceLine(t, s, `^(vllm:omni_e2e_request_latency_s_bucket\{.*le="2"\}) 3$`, "${1} 1")
		}, StatsAuto, []string{"histogram invariants"}},
		{"negative sum", func(t *testing.T, s string) string {
			return replaceLine(t, s, `^(vllm:omni_audio_ttfp_s_sum\{.*\}) .*$`, "${1} -0.4")
		}, StatsAuto, []string{"histogram invariants"}},
		{"threshold_ms not an integer", func(t *testing.T, s string) string {
			return replaceLine(t, s, `threshold_ms="100"`, `threshold_ms="0.1"`)
		}, StatsAuto, []string{"threshold_ms values are integers"}},
		{"_seconds instead of _s", func(t *testing.T, s string) string {
			return s + "# HELP vllm:omni_image_latency_seconds Image latency.\n# TYPE vllm:omni_image_latency_seconds gauge\nvllm:omni_image_latency_seconds 1\n"
		}, StatsAuto, []string{"naming conventions"}},
		{"counter without _total", func(t *testing.T, s string) string {
			return s + "# HELP vllm_omni:image_count Images.\n# TYPE vllm_omni:image_count counter\nvllm_omni:image_count 3\n"
		}, StatsAuto, []string{"naming conventions", "promlint"}},
		{"both prefixes", func(t *testing.T, s string) string {
			return s + "# HELP vllm_omni:audio_frames_total Frames.\n# TYPE vllm_omni:audio_frames_total counter\nvllm_omni:audio_frames_total 1\n"
		}, StatsAuto, []string{"naming conventions"}},
		{"no HELP", func(t *testing.T, s string) string {
			return s + "# TYPE vllm:omni_image_requests_total counter\nvllm:omni_image_requests_total 1\n"
		}, StatsAuto, []string{"promlint"}},
		{"data with stats off", func(t *testing.T, s string) string { return s },
			StatsOff, []string{"stats off: pipeline families present and empty", "stats off: no upstream vllm:* families"}},
	}
	base := parseText(t, good)
	if rep := Evaluate(Input{After: base}, profileRules(t)); !rep.OK() {
		t.Fatalf("the unedited exposition fails:\n%s", failures(rep))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := parseText(t, c.edit(t, good))
			rep := Evaluate(Input{After: fs, Stats: c.stats}, profileRules(t))
			results := byRule(rep)
			for _, rule := range c.fail {
				if r, ok := results[rule]; !ok || r.Status != Fail {
					t.Errorf("rule %q: %+v, want a failure", rule, r)
				}
			}
			if rep.Failed != len(c.fail) {
				t.Errorf("%d rules failed, want %d (%v):\n%s", rep.Failed, len(c.fail), c.fail, failures(rep))
			}
		})
	}
}

func TestProfileStatsOffViolations(t *testing.T) {
	off := textExposition(t, metricsCore(t, false))
	// A pipeline family missing with stats off: absent, not registered.
	fs := parseText(t, replaceLine(t, off, `vllm:omni_audio_underrun_s\b`, ""))
	res := byRule(Evaluate(Input{After: fs}, profileRules(t)))
	if r := res["stats off: pipeline families present and empty"]; r.Status != Fail || !strings.Contains(fullDetail(r), "vllm:omni_audio_underrun_s: absent") {
		t.Errorf("missing family with stats off: %+v", r)
	}
	// An upstream family with stats off.
	fs = parseText(t, off+"# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n")
	res = byRule(Evaluate(Input{After: fs, Stats: StatsOff}, profileRules(t)))
	if r := res["stats off: no upstream vllm:* families"]; r.Status != Fail || !strings.Contains(fullDetail(r), "vllm:num_requests_running") {
		t.Errorf("upstream family with stats off: %+v", r)
	}
	// Stats declared on, but the upstream families are missing.
	fs = parseText(t, off)
	res = byRule(Evaluate(Input{After: fs, Stats: StatsOn}, profileRules(t)))
	if r := res["stats on: upstream vllm:* stage/replica families present"]; r.Status != Fail ||
		r.Observed != "0 present" || !strings.Contains(fullDetail(r), "vllm:num_requests_running") {
		t.Errorf("stats on without upstream families: %+v", r)
	}
}

func TestProfileComesFromTheMetricCore(t *testing.T) {
	rules := profileRules(t)
	for _, s := range omnimetrics.PipelineFamilies() {
		found := false
		for _, r := range rules {
			if r.Family == s.Name && r.Buckets != nil {
				found = sameBounds(r.Buckets, s.Buckets)
			}
			if r.Family == s.Name && r.Exists != nil {
				found = found || s.Type != omnimetrics.TypeHistogram
			}
		}
		if !found {
			t.Errorf("%s: no rule with the metric core's definition", s.Name)
		}
	}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			t.Errorf("profile rule %q: %v", r.DisplayName(), err)
		}
	}
}

// scrape keeps its own copy of the two pipeline prefixes; they must be the
// metric core's.
func TestPrefixesAgreeWithTheMetricCore(t *testing.T) {
	if got := scrape.Canonical(omnimetrics.PrefixCurrent + "audio_ttfp_s"); got != omnimetrics.PrefixDesign+"audio_ttfp_s" {
		t.Errorf("Canonical(%saudio_ttfp_s) = %q", omnimetrics.PrefixCurrent, got)
	}
	if !scrape.IsPipeline(omnimetrics.PrefixDesign+"x") || !scrape.IsPipeline(omnimetrics.PrefixCurrent+"x") || scrape.IsPipeline(omnimetrics.PrefixClient+"x") {
		t.Error("IsPipeline disagrees with the metric core's prefixes")
	}
}

func TestProfileTokenCountersOptional(t *testing.T) {
	good := textExposition(t, metricsCore(t, true))
	old := replaceLine(t, replaceLine(t, good, `vllm:omni_prompt_tokens_total[ {]`, ""), `vllm:omni_generation_tokens_total[ {]`, "")
	rep := Evaluate(Input{After: parseText(t, old)}, profileRules(t))
	if !rep.OK() {
		t.Errorf("a server without the newer token counters fails:\n%s", failures(rep))
	}
	if r := byRule(rep)["prompt_tokens_total: exists"]; r.Status != Skip || !strings.Contains(r.Detail, "optional") {
		t.Errorf("absent token counter: %+v", r)
	}
}
