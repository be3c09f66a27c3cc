package check

import (
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// Built-in profiles: vllm-omni for vLLM-Omni servers (which includes
// format), format for the exposition format of any server, breakdown for
// what the breakdown of a run relies on (the per-stage and per-edge series
// of a vLLM-Omni server with stats on, which vllm-omni checks only for
// their shape).
const (
	ProfileVLLMOmni  = "vllm-omni"
	ProfileFormat    = "format"
	ProfileBreakdown = "breakdown"
)

// ProfileNames lists the built-in profiles.
func ProfileNames() []string { return []string{ProfileVLLMOmni, ProfileFormat, ProfileBreakdown} }

// Profile returns the rules of a built-in profile.
func Profile(name string) ([]Rule, error) {
	switch name {
	case ProfileVLLMOmni:
		return vllmOmniProfile(), nil
	case ProfileFormat:
		return []Rule{formatRule(ProfileFormat)}, nil
	case ProfileBreakdown:
		return []Rule{{Name: "breakdown consistency", Check: CheckBreakdown, Source: "profile " + ProfileBreakdown}}, nil
	}
	return nil, fmt.Errorf("unknown profile %q (built in: %s)", name, strings.Join(ProfileNames(), ", "))
}

// newerServersOnly tells the families that only newer servers expose
// (the token counters, docs/reference/metric-families.md, section 3.1),
// whose absence is not a failure.
func newerServersOnly(name string) bool {
	return name == "prompt_tokens_total" || name == "generation_tokens_total"
}

// Tolerances of the run comparisons, stated in the rule output.
func framesTolerance() Tolerance { return Tolerance{Rel: 0.01} }

// continuityTolerance allows for the server judging continuity on its own
// clock at emission, the client on arrival times after the network.
func continuityTolerance() Tolerance { return Tolerance{Abs: 1, Rel: 0.10} }

// formatRule validates the exposition bytes (see package exposition).
func formatRule(profile string) Rule {
	return Rule{Name: "format", Check: CheckFormat, Source: "profile " + profile}
}

// vllmOmniProfile builds the vllm-omni rules from the metric core's family
// definitions, so names, types, labels and buckets are never restated here.
func vllmOmniProfile() []Rule {
	const src = "profile " + ProfileVLLMOmni
	yes := true
	var rules []Rule
	add := func(r Rule) {
		r.Source = src
		rules = append(rules, r)
	}
	add(formatRule(ProfileVLLMOmni))
	for _, s := range omnimetrics.PipelineFamilies() {
		add(Rule{Name: s.Name + ": exists", Family: s.Name, Exists: &yes, Optional: newerServersOnly(s.Name)})
		add(Rule{Name: s.Name + ": type", Family: s.Name, Type: s.Type})
		add(Rule{Name: s.Name + ": labels", Family: s.Name, Labels: append([]string{}, s.Labels...)})
		if s.Type == omnimetrics.TypeHistogram {
			add(Rule{Name: s.Name + ": buckets", Family: s.Name, Buckets: append([]float64{}, s.Buckets...)})
		}
	}
	// Diffusion families exist on newer servers with a diffusion stage
	// (docs/reference/metric-families.md, section 5): optional, checked when
	// present.
	for _, s := range omnimetrics.DiffusionFamilies() {
		add(Rule{Name: s.Name + ": exists", Family: s.Name, Exists: &yes, Optional: true})
		add(Rule{Name: s.Name + ": type", Family: s.Name, Type: s.Type})
		add(Rule{Name: s.Name + ": labels", Family: s.Name, Labels: append([]string{}, s.Labels...)})
		add(Rule{Name: s.Name + ": buckets", Family: s.Name, Buckets: append([]float64{}, s.Buckets...)})
	}
	// Speech-stream counters exist on servers since September 2026, under
	// names never published: these are the simulator's guess, optional;
	// other speech_st* families are tolerated (the stats gating rule lists
	// them in the notes).
	for _, s := range omnimetrics.SpeechStreamFamilies() {
		add(Rule{Name: s.Name + ": exists", Family: s.Name, Exists: &yes, Optional: true})
		add(Rule{Name: s.Name + ": type", Family: s.Name, Type: s.Type})
		add(Rule{Name: s.Name + ": labels", Family: s.Name, Labels: append([]string{}, s.Labels...)})
	}
	// Upstream families exist only with stats on; their absence is judged by
	// the gating rule, so these rules skip absent families.
	for _, s := range omnimetrics.UpstreamFamilies() {
		add(Rule{Name: s.Name + ": type", Family: s.Name, Type: s.Type})
		add(Rule{Name: s.Name + ": labels", Family: s.Name, Labels: append([]string{}, s.Labels...)})
		if s.Type == omnimetrics.TypeHistogram {
			add(Rule{Name: s.Name + ": buckets", Family: s.Name, Buckets: append([]float64{}, s.Buckets...)})
		}
	}
	add(Rule{Name: "naming conventions", Check: CheckNaming})
	add(Rule{Name: "histogram invariants", Check: CheckHistogramInvariants, NonNegative: true})
	add(Rule{Name: "threshold_ms values are integers", Check: CheckIntegerLabels, Label: omnimetrics.LabelThresholdMS})
	add(Rule{Name: "stats gating", Check: CheckStatsGating})
	add(Rule{Name: "promlint", Check: CheckLint})

	// Comparisons with what the client observed (skipped without --run).
	add(Rule{Name: "requests_success_total matches the client's completed requests",
		Family: "requests_success_total", Match: map[string]string{omnimetrics.LabelFinishedReason: "*"},
		Measure: MeasureDelta, Expect: &Expectation{Op: "==", Figure: "completed.*"}})
	add(Rule{Name: "e2e_request_latency_s count matches the completed requests",
		Family: "e2e_request_latency_s", Measure: MeasureCount, Expect: &Expectation{Op: "==", Figure: "completed"}})
	// The audio families count the chat path, and speech streams on servers
	// that record them: the audio_streams figures follow the server
	// (JudgeSpeechStreams).
	add(Rule{Name: "audio_ttfp_s count matches the streamed responses with audio",
		Family: "audio_ttfp_s", Measure: MeasureCount, Expect: &Expectation{Op: "==", Figure: figAudioStreams}})
	add(Rule{Name: "audio_frames_total matches the client's decoded frames",
		Family: "audio_frames_total", Measure: MeasureDelta, Expect: &Expectation{Op: "==", Figure: "audio_frames"},
		Tolerance: framesTolerance()})
	add(Rule{Name: "audio_continuity_ok_total matches the client's continuous responses",
		Family: "audio_continuity_ok_total", Match: map[string]string{omnimetrics.LabelThresholdMS: "100"},
		Measure: MeasureDelta, Expect: &Expectation{Op: "==", Figure: figAudioStreamsContinuous + ".100"}, Tolerance: continuityTolerance()})
	add(Rule{Name: "server TTFP sum not above the client's",
		Family: "audio_ttfp_s", Measure: MeasureSum, Expect: &Expectation{Op: "<=", Figure: figAudioStreamsTTFPSum}})
	add(Rule{Name: "speech_stream_completed_total matches the client's completed speech streams",
		Family: "speech_stream_completed_total", Optional: true,
		Measure: MeasureDelta, Expect: &Expectation{Op: "==", Figure: "speech_completed"}})
	return rules
}
