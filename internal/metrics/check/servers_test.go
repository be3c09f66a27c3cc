package check

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
)

const ruleStatsOn = "stats on: upstream vllm:* stage/replica families present"

// diffusionHistograms is the text of the diffusion families, each with one
// observation on the given stage, under the current prefix.
func diffusionHistograms(stage string) string {
	var b strings.Builder
	l := `model_name="` + testModel + `",replica="0",stage="` + stage + `"`
	for _, s := range omnimetrics.DiffusionFamilies() {
		name := omnimetrics.PrefixCurrent + s.Name
		b.WriteString("# HELP " + name + " " + s.Help + "\n# TYPE " + name + " histogram\n")
		for _, ub := range s.Buckets {
			b.WriteString(name + "_bucket{" + l + `,le="` + strconv.FormatFloat(ub, 'g', -1, 64) + "\"} 1\n")
		}
		b.WriteString(name + "_bucket{" + l + ",le=\"+Inf\"} 1\n")
		b.WriteString(name + "_sum{" + l + "} 0.04\n" + name + "_count{" + l + "} 1\n")
	}
	return b.String()
}

// TestDiffusionOnlyServer: a server whose only stage is a diffusion stage
// registers every pipeline family but no upstream vllm:* family, stats on
// or off. With stats on (given, or told from its data) the default profile
// passes it, and says why no upstream family is required.
func TestDiffusionOnlyServer(t *testing.T) {
	m, err := omnimetrics.New(omnimetrics.Options{Prefix: omnimetrics.PrefixCurrent, ModelName: testModel,
		StatsEnabled: true, Topology: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	m.Tokens(12, 0)
	m.RequestSucceeded(2.5, "stop")
	text := textExposition(t, m) + diffusionHistograms("0")
	for _, stats := range []StatsMode{StatsOn, StatsAuto} {
		rep := Evaluate(Input{After: parseText(t, text), Stats: stats}, profileRules(t))
		if !rep.OK() {
			t.Errorf("stats %v: the profile fails a diffusion-only server:\n%s", stats, failures(rep))
		}
		r := byRule(rep)[ruleStatsOn]
		if r.Status != Pass || !strings.Contains(r.Detail, "diffusion-only server") || !strings.Contains(r.Detail, "stage 0") {
			t.Errorf("stats %v: %+v, want a pass that says the server is diffusion-only", stats, r)
		}
	}
}

// TestUpstreamFamiliesRequiredAndTolerated: with LLM stages and stats on,
// only the long-standing upstream families are required. Other known ones
// may be missing, unknown upstream and speech-stream families are tolerated
// and listed in the notes; a missing long-standing family fails, also on a
// server that has a diffusion stage beside its LLM stages.
func TestUpstreamFamiliesRequiredAndTolerated(t *testing.T) {
	good := textExposition(t, metricsCore(t, true))
	sr := `{model_name="` + testModel + `",replica="0",stage="0"}`

	newer := replaceLine(t, good, `vllm:num_preemptions_total`, "") // a family vLLM may drop
	newer += "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n" +
		`vllm:cache_config_info{block_size="16"} 1` + "\n" +
		"# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.\n# TYPE vllm:spec_decode_num_drafts_total counter\n" +
		"vllm:spec_decode_num_drafts_total" + sr + " 0\n" +
		"# HELP vllm_omni:speech_stream_x_total Speech streams by a name nobody published.\n# TYPE vllm_omni:speech_stream_x_total counter\n" +
		`vllm_omni:speech_stream_x_total{model_name="` + testModel + `"} 2` + "\n"
	rep := Evaluate(Input{After: parseText(t, newer)}, profileRules(t))
	if !rep.OK() {
		t.Errorf("the profile fails a server with unknown families:\n%s", failures(rep))
	}
	for _, want := range []string{
		"unknown upstream families, tolerated: vllm:cache_config_info, vllm:spec_decode_num_drafts_total",
		"unknown speech-stream families, tolerated: vllm_omni:speech_stream_x_total",
	} {
		if !slices.Contains(rep.Notes, want) {
			t.Errorf("notes %q, want %q", rep.Notes, want)
		}
	}

	noTTFT := replaceLine(t, good, `vllm:time_to_first_token_seconds`, "")
	for name, text := range map[string]string{"LLM stages": noTTFT, "LLM and diffusion stages": noTTFT + diffusionHistograms("1")} {
		r := byRule(Evaluate(Input{After: parseText(t, text), Stats: StatsOn}, profileRules(t)))[ruleStatsOn]
		if r.Status != Fail || !slices.Equal(r.Problems, []string{"vllm:time_to_first_token_seconds"}) {
			t.Errorf("%s without TTFT: %+v, want a failure naming it", name, r)
		}
	}
}

// TestRunRulesSpeechStreams is `check --run` on a speech run: the audio
// families are compared with the speech streams where the server records
// them (told by its speech-stream counters, or failing those by an
// audio_ttfp_s count that includes them), and where it does not, the rules
// say so instead of passing on a match of zeros.
func TestRunRulesSpeechStreams(t *testing.T) {
	const ruleCompleted = "speech_stream_completed_total matches the client's completed speech streams"
	speech := func(kind string) results.Record {
		return results.Record{Kind: kind, Status: 200, TTFPS: 0.25, AudioFrames: 14400, AudioBytes: 28800,
			Continuity: &results.Continuity{OK: map[string]bool{"100": true}}}
	}
	fig := FiguresFromRecords([]results.Record{speech(results.KindSpeech), speech(results.KindSpeechSSE), speech(results.KindSpeechWS)})
	if fig.SpeechStreams != 3 || fig.SpeechCompleted != 3 || fig.SpeechContinuous["100"] != 3 || fig.ChatAudioResponses != 0 {
		t.Fatalf("figures %+v: want 3 speech streams, all completed and continuous", fig)
	}
	server := func(current bool) string {
		m, err := omnimetrics.New(omnimetrics.Options{ModelName: testModel, StatsEnabled: true, Upstream: true,
			Topology: []int{1, 1, 1}, SpeechStreams: current})
		if err != nil {
			t.Fatal(err)
		}
		sr := omnimetrics.StageReplica{Stage: 2}
		for range 3 {
			if current {
				m.AudioFirstPacket(sr, 0.2)
				m.SpeechStreamCompleted(sr, []float64{0.2, 0.4, 0.6}, []int{9600, 9600, 9600}, 24000, 1)
			}
			m.AudioAtFinalize(sr, 14400, 24000, 0.3)
			m.RequestSucceeded(0.9, "stop")
		}
		return textExposition(t, m)
	}
	eval := func(text string) (*Report, map[string]Result) {
		rep := Evaluate(Input{After: parseText(t, text), Run: &fig}, profileRules(t))
		return rep, byRule(rep)
	}

	rep, res := eval(server(true))
	if !rep.OK() {
		t.Errorf("current server: the run rules fail:\n%s", failures(rep))
	}
	for _, name := range []string{ruleTTFPCount, ruleContinuity, ruleTTFPSum, ruleCompleted} {
		if r := res[name]; r.Status != Pass {
			t.Errorf("current server: %s: %+v, want pass", name, r)
		}
	}
	if r := res[ruleTTFPCount]; r.Expected != "== 3 (run.audio_streams)" || !strings.Contains(r.Detail, "speech-stream counters") {
		t.Errorf("current server: %+v", r)
	}

	// A current server whose counters go by other names: told from the
	// TTFP count.
	unnamed := replaceLine(t, server(true), `speech_stream`, "")
	if r := byRule(Evaluate(Input{After: parseText(t, unnamed), Run: &fig}, profileRules(t)))[ruleTTFPCount]; r.Status != Pass ||
		!strings.Contains(r.Detail, "audio_ttfp_s counted the run's 3 speech streams") {
		t.Errorf("current server without the counters: %+v", r)
	}

	// An older server recorded zero: no rule may pass on 0 == 0.
	rep, res = eval(server(false))
	if !rep.OK() {
		t.Errorf("older server: the run rules fail:\n%s", failures(rep))
	}
	for _, name := range []string{ruleTTFPCount, ruleContinuity, ruleTTFPSum} {
		if r := res[name]; r.Status != Skip || !strings.Contains(r.Detail, "does not record speech streams") {
			t.Errorf("older server: %s: %+v, want a skip that says the server does not record speech streams", name, r)
		}
	}
	if r := res[ruleCompleted]; r.Status != Skip || r.Observed != "absent" {
		t.Errorf("older server: %s: %+v, want a skip", ruleCompleted, r)
	}
}
