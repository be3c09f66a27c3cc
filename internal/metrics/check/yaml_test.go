package check

import (
	"strings"
	"testing"
)

func TestParseRulesExample(t *testing.T) {
	rules, err := LoadRules("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 17 {
		t.Fatalf("%d rules, want 17", len(rules))
	}
	if r := rules[0]; r.Family != "audio_ttfp_s" || r.Exists == nil || !*r.Exists || r.Source != "testdata/example.yaml:5" {
		t.Errorf("rule 1 = %+v", r)
	}
	if r := rules[3]; len(r.Buckets) != 13 || r.Buckets[12] != 60 {
		t.Errorf("buckets = %v (+Inf is dropped, always required)", r.Buckets)
	}
	if r := rules[9]; r.Tolerance != (Tolerance{Abs: 1, Rel: 0.1}) || r.Expect.Figure != "continuous.100" {
		t.Errorf("continuity rule = %+v", r)
	}
	if r := rules[8]; r.Tolerance != (Tolerance{Rel: 0.01}) {
		t.Errorf("frames tolerance = %+v", r.Tolerance)
	}
	if r := rules[10]; r.Quantile == nil || *r.Quantile != 0.99 || r.Expect.Op != "<=" || r.Expect.Value != 2.5 {
		t.Errorf("quantile rule = %+v", r)
	}

	// On the metric core with stats on and matching run figures, every rule
	// holds.
	fs := parseText(t, textExposition(t, metricsCore(t, true)))
	f := coreFigures()
	rep := Evaluate(Input{After: fs, Run: &f}, rules)
	if !rep.OK() || rep.Skipped != 0 {
		t.Errorf("example rules on the metric core: %d failed, %d skipped:\n%s", rep.Failed, rep.Skipped, failures(rep))
	}
}

func TestParseRulesErrors(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown key":        {"rules:\n  - family: x\n    exist: true\n", "line 3: field exist not found"},
		"two assertions":     {"rules:\n  - family: x\n    exists: true\n    type: gauge\n", "t.yaml:2: rule 1: a rule makes exactly one assertion"},
		"no assertion":       {"rules:\n  - family: x\n", "t.yaml:2: rule 1: a rule makes exactly one assertion"},
		"no family":          {"rules:\n  - type: gauge\n", "family is required"},
		"bad type":           {"rules:\n  - family: x\n    type: meter\n", `type "meter"`},
		"bad expect":         {"rules:\n  - family: x\n    expect: about 3\n", "want an operator"},
		"bad operand":        {"rules:\n  - family: x\n    expect: \"<= fast\"\n", "neither a number nor run.<figure>"},
		"unknown figure":     {"rules:\n  - family: x\n    expect: \"== run.completd\"\n", `unknown run figure "run.completd"`},
		"wildcard alone":     {"rules:\n  - family: x\n    expect: \"== run.completed.*\"\n", `needs a match label set to "*"`},
		"bad tolerance":      {"rules:\n  - family: x\n    expect: \"== 1\"\n    tolerance: lots\n", `line 4: tolerance "lots"`},
		"tolerance alone":    {"rules:\n  - family: x\n    exists: true\n    tolerance: 1\n", "belong to a rule with expect"},
		"bad quantile":       {"rules:\n  - family: x\n    quantile: 99\n    expect: \"< 1\"\n", "quantile 99: want a number in 0..1"},
		"bad measure":        {"rules:\n  - family: x\n    measure: rate\n    expect: \"< 1\"\n", `measure "rate"`},
		"bad check":          {"rules:\n  - check: vibes\n", `check "vibes"`},
		"integer no label":   {"rules:\n  - check: integer_labels\n", "needs label:"},
		"bad bucket":         {"rules:\n  - family: x\n    buckets: [1, two]\n", `line 3: buckets: "two" is not a number`},
		"decreasing buckets": {"rules:\n  - family: x\n    buckets: [2, 1]\n", "bounds must increase"},
		"empty":              {"", "no rules"},
		"no list":            {"rules: []\n", "no rules"},
		"bad stats":          {"rules:\n  - check: stats_gating\n    stats: maybe\n", "want auto, on or off"},
	}
	for name, c := range cases {
		_, err := ParseRules("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.yaml") {
			t.Errorf("%s: error %v, want it to name t.yaml and contain %q", name, err, c.want)
		}
	}
	// All problems are reported at once, each with its line.
	_, err := ParseRules("t.yaml", []byte("rules:\n  - family: x\n  - family: y\n    type: nope\n"))
	if err == nil || !strings.Contains(err.Error(), "t.yaml:2: rule 1") || !strings.Contains(err.Error(), "t.yaml:3: rule 2") {
		t.Errorf("several errors: %v", err)
	}
}

func TestExpectationAndTolerance(t *testing.T) {
	cases := []struct {
		expect   string
		tol      Tolerance
		observed float64
		want     bool
	}{
		{"== 10", Tolerance{}, 10, true},
		{"== 10", Tolerance{}, 10.5, false},
		{"== 10", Tolerance{Abs: 0.5}, 10.5, true},
		{"== 10", Tolerance{Rel: 0.05}, 10.5, true},
		{"== 10", Tolerance{Rel: 0.04}, 10.5, false},
		{"== 100", Tolerance{Abs: 1, Rel: 0.1}, 109, true}, // max(1, 10) = 10
		{"== 5", Tolerance{Abs: 1, Rel: 0.1}, 6, true},     // max(1, 0.5) = 1
		{"!= 0", Tolerance{}, 0, false},
		{"!= 0", Tolerance{}, 1, true},
		{"<= 2.5", Tolerance{}, 2.5, true},
		{"<= 2.5", Tolerance{}, 2.6, false},
		{"<= 2.5", Tolerance{Abs: 0.1}, 2.6, true},
		{">= 3", Tolerance{}, 2.9, false},
		{">= 3", Tolerance{Rel: 0.1}, 2.8, true},
		{"< 1", Tolerance{}, 1, false},
		{"> 1", Tolerance{}, 1.01, true},
		{"<= +Inf", Tolerance{}, 1e300, true},
	}
	for _, c := range cases {
		e, err := ParseExpectation(c.expect)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.holds(c.observed, e.Value, c.tol.Allowed(e.Value)); got != c.want {
			t.Errorf("%v %s with %s: %v, want %v", c.observed, c.expect, c.tol, got, c.want)
		}
	}
	for in, want := range map[string]Tolerance{"2": {Abs: 2}, "5%": {Rel: 0.05}, " 0.5 % ": {Rel: 0.005}} {
		if got, err := ParseTolerance(in); err != nil || got != want {
			t.Errorf("ParseTolerance(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"-1", "x", "-5%", "NaN", "Inf"} {
		if _, err := ParseTolerance(in); err == nil {
			t.Errorf("ParseTolerance(%q) accepted", in)
		}
	}
	for tol, want := range map[Tolerance]string{{}: "exact", {Abs: 2}: "±2", {Rel: 0.05}: "±5%", {Abs: 1, Rel: 0.1}: "±max(1, 10%)"} {
		if got := tol.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", tol, got, want)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	f.Add([]byte("rules:\n  - family: x\n    exists: true\n"))
	f.Add([]byte("rules:\n  - family: x\n    match: {a: \"*\"}\n    expect: \"== run.completed.*\"\n    tolerance: {abs: 1, rel: 10%}\n"))
	f.Add([]byte("rules:\n  - family: x\n    buckets: [1, 2, +Inf]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseRules("f.yaml", data)
		if err != nil {
			return
		}
		for _, r := range rules {
			if err := r.Validate(); err != nil {
				t.Fatalf("ParseRules returned an invalid rule: %v", err)
			}
			_ = r.DisplayName()
		}
	})
}
