package check

import (
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// TestStatsOffBothShapes: the vllm-omni profile and --stats auto accept the
// original metrics design's stats-off shape (every pipeline family HELP/TYPE
// only; docs/reference/metric-families.md, section 2.1)
// and current servers' (five model_name families with a zero child and its
// `_created`), and detect stats off in both.
func TestStatsOffBothShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bare    bool
		created bool
		samples bool
	}{
		{"design: HELP/TYPE only", true, false, false},
		{"current: zero model_name children", false, false, true},
		{"current, Python _created", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := omnimetrics.New(omnimetrics.Options{ModelName: testModel, Topology: []int{1, 1, 1},
				BareStatsOff: tc.bare, PythonCreated: tc.created})
			if err != nil {
				t.Fatal(err)
			}
			text := textExposition(t, m)
			if got := strings.Contains(text, "\nvllm:omni_num_requests_running{"); got != tc.samples {
				t.Fatalf("exposition has the running child: %v, want %v:\n%s", got, tc.samples, text)
			}
			if got := strings.Contains(text, "_created"); got != tc.created {
				t.Fatalf("exposition has _created: %v, want %v", got, tc.created)
			}
			rep := Evaluate(Input{After: parseText(t, text)}, profileRules(t))
			if !rep.OK() {
				t.Errorf("profile fails:\n%s", failures(rep))
			}
			if !strings.HasPrefix(rep.Stats, "off (detected") {
				t.Errorf("stats auto: %q, want off (detected ...)", rep.Stats)
			}
			if r := byRule(rep)["stats off: pipeline families present and empty"]; r.Status != Pass {
				t.Errorf("gating: %+v", r)
			}
		})
	}
	// A non-zero value in a bound child is data with stats off.
	m, err := omnimetrics.New(omnimetrics.Options{ModelName: testModel, Topology: []int{1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	text := replaceLine(t, textExposition(t, m), `^(vllm:omni_prompt_tokens_total\{.*\}) 0$`, "$1 7")
	rep := Evaluate(Input{After: parseText(t, text), Stats: StatsOff}, profileRules(t))
	if r := byRule(rep)["stats off: pipeline families present and empty"]; r.Status != Fail ||
		!strings.Contains(fullDetail(r), "vllm:omni_prompt_tokens_total: has data") {
		t.Errorf("non-zero bound child with stats off: %+v", r)
	}
}

// TestDiffusionFamiliesOptional: absent diffusion families skip, present
// ones are checked for type, labels and buckets, and unknown pipeline
// families stay tolerated.
func TestDiffusionFamiliesOptional(t *testing.T) {
	base := textExposition(t, metricsCore(t, true))
	res := byRule(Evaluate(Input{After: parseText(t, base)}, profileRules(t)))
	if r := res["diffusion_exec_s: exists"]; r.Status != Skip {
		t.Errorf("absent diffusion family: %+v", r)
	}

	hist := func(name string, buckets []float64) string {
		var b strings.Builder
		b.WriteString("# HELP vllm_omni:" + name + " h\n# TYPE vllm_omni:" + name + " histogram\n")
		l := `model_name="` + testModel + `",replica="0",stage="1"`
		for _, ub := range buckets {
			b.WriteString("vllm_omni:" + name + "_bucket{" + l + `,le="` + strconv.FormatFloat(ub, 'g', -1, 64) + "\"} 1\n")
		}
		b.WriteString("vllm_omni:" + name + "_bucket{" + l + ",le=\"+Inf\"} 1\n")
		b.WriteString("vllm_omni:" + name + "_sum{" + l + "} 0.5\nvllm_omni:" + name + "_count{" + l + "} 1\n")
		return b.String()
	}
	var extra strings.Builder
	for _, s := range omnimetrics.DiffusionFamilies() {
		extra.WriteString(hist(s.Name, s.Buckets))
	}
	extra.WriteString("# HELP vllm_omni:image_future_s h\n# TYPE vllm_omni:image_future_s gauge\nvllm_omni:image_future_s 1\n")
	rep := Evaluate(Input{After: parseText(t, base+extra.String())}, profileRules(t))
	if !rep.OK() {
		t.Errorf("profile fails with diffusion and unknown families:\n%s", failures(rep))
	}
	res = byRule(rep)
	for _, s := range omnimetrics.DiffusionFamilies() {
		for _, rule := range []string{": exists", ": type", ": labels", ": buckets"} {
			if r := res[s.Name+rule]; r.Status != Pass {
				t.Errorf("%s%s: %+v", s.Name, rule, r)
			}
		}
	}

	wrong := hist("diffusion_exec_s", []float64{1, 2})
	res = byRule(Evaluate(Input{After: parseText(t, base+wrong)}, profileRules(t)))
	if r := res["diffusion_exec_s: buckets"]; r.Status != Fail {
		t.Errorf("wrong diffusion buckets: %+v", r)
	}
}
