package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/load"
)

func ptr[T any](v T) *T { return &v }

// scenarioWithLoad is the built-in chat-voice scenario with the given load
// defaults.
func scenarioWithLoad(t *testing.T, l LoadDefaults) *Scenario {
	t.Helper()
	sc, err := Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	sc = sc.Clone()
	sc.Load = l
	return sc
}

func TestOverridesReplaceScenarioFields(t *testing.T) {
	sc := scenarioWithLoad(t, LoadDefaults{})
	sc.Voice, sc.Model = "scenario-voice", "scenario-model"
	ov := Overrides{
		Voice:       ptr("flag-voice"),
		AudioFormat: ptr(FormatPCM),
		ExtraBody:   `{"temperature": 0.5}`,
		Headers:     []Header{{"X-Trace", "1"}, {"authorization", "Bearer s3cret"}},
	}
	ap, err := ov.Apply(sc)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Voice != "flag-voice" || sc.Model != "scenario-model" {
		t.Errorf("voice %q model %q: want the flag's voice and the scenario's model", sc.Voice, sc.Model)
	}
	if sc.PCMSampleRate != DefaultPCMSampleRate {
		t.Errorf("pcm_sample_rate %d: want the PCM default %d", sc.PCMSampleRate, DefaultPCMSampleRate)
	}
	if sc.ExtraBody["temperature"] != 0.5 || sc.Headers["X-Trace"] != "1" {
		t.Errorf("extra body %v headers %v: want both merged", sc.ExtraBody, sc.Headers)
	}
	if _, ok := sc.Headers["authorization"]; ok {
		t.Errorf("headers %v: the credentials entered the scenario", sc.Headers)
	}
	if ap.Workload == nil {
		t.Fatal("no workload")
	}
}

func TestOverridesErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		ov   Overrides
		want string
	}{
		{"field", Overrides{PCMSampleRate: ptr(-1)}, "--pcm-sample-rate: "},
		{"prompts", Overrides{Prompts: ptr("builtin:nope")}, "--prompts: "},
		{"extra body", Overrides{ExtraBody: "[1]"}, "--extra-body: not a JSON object"},
		{"credentials twice", Overrides{HaveAPIKey: true, Headers: []Header{{"Authorization", "x"}}}, "--header Authorization and --api-key"},
		{"concurrency", Overrides{Load: LoadOverrides{Concurrency: ptr(0)}}, "--concurrency 0: must be at least 1"},
		{"requests", Overrides{Load: LoadOverrides{Requests: ptr(-1)}}, "--requests -1: must be 0 or more"},
		{"warmup", Overrides{Load: LoadOverrides{Warmup: ptr(-2)}}, "--warmup -2: must be 0 or more"},
		{"duration", Overrides{Load: LoadOverrides{Duration: ptr(-time.Second)}}, "--duration -1s: must be 0 or more"},
		{"max-inflight", Overrides{Load: LoadOverrides{MaxInflight: -1}}, "--max-inflight -1: must be 0 or more"},
		{"ramp-up", Overrides{Load: LoadOverrides{RampUp: -time.Second}}, "--ramp-up -1s: must be 0 or more"},
		{"stages syntax", Overrides{Load: LoadOverrides{Stages: "soon"}}, "--stages: "},
		{"stages and workers", Overrides{Load: LoadOverrides{Stages: "1s:2", Concurrency: ptr(2)}}, "--stages sets the workers over time"},
		{"no bound", Overrides{Load: LoadOverrides{Requests: ptr(0)}}, "--requests 0 is no count bound"},
		{"percentiles", Overrides{Percentiles: []float64{101}}, "--percentiles: percentile 101"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.ov.Apply(scenarioWithLoad(t, LoadDefaults{}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v: want one containing %q", err, tc.want)
			}
		})
	}
}

func TestOverridesLoadPrecedence(t *testing.T) {
	scLoad := LoadDefaults{Concurrency: 3, Rate: 2, Arrival: load.Constant, Requests: 50, Duration: time.Minute, Warmup: 2}
	for _, tc := range []struct {
		name string
		sc   LoadDefaults
		ov   LoadOverrides
		want load.Config
	}{
		{"defaults", LoadDefaults{}, LoadOverrides{},
			load.Config{Concurrency: DefaultConcurrency, Requests: DefaultRequests}},
		{"scenario", scLoad, LoadOverrides{},
			load.Config{Concurrency: 3, Rate: 2, Arrival: load.Constant, Requests: 50, Duration: time.Minute, Warmup: 2}},
		{"flags win", scLoad, LoadOverrides{Concurrency: ptr(8), Rate: ptr(0.0), Requests: ptr(5), Warmup: ptr(0)},
			load.Config{Concurrency: 8, Arrival: load.Constant, Requests: 5, Duration: time.Minute}},
		{"duration alone runs whole", scLoad, LoadOverrides{Duration: ptr(10 * time.Second)},
			load.Config{Concurrency: 3, Rate: 2, Arrival: load.Constant, Duration: 10 * time.Second, Warmup: 2}},
		{"rate defaults to poisson", LoadDefaults{}, LoadOverrides{Rate: ptr(5.0)},
			load.Config{Concurrency: DefaultConcurrency, Rate: 5, Arrival: load.Poisson, Requests: DefaultRequests}},
		{"stages bound the run", LoadDefaults{Requests: 50}, LoadOverrides{Stages: "1s:2,2s:6"},
			load.Config{Concurrency: 6, Duration: 3 * time.Second,
				Stages: []load.Stage{{Duration: time.Second, Target: 2}, {Duration: 2 * time.Second, Target: 6}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ap, err := Overrides{Load: tc.ov}.Apply(scenarioWithLoad(t, tc.sc))
			if err != nil {
				t.Fatal(err)
			}
			got := ap.Load
			if got.Concurrency != tc.want.Concurrency || got.Rate != tc.want.Rate || got.Arrival != tc.want.Arrival ||
				got.Requests != tc.want.Requests || got.Duration != tc.want.Duration || got.Warmup != tc.want.Warmup ||
				len(got.Stages) != len(tc.want.Stages) {
				t.Errorf("load %+v: want %+v", got, tc.want)
			}
		})
	}
}

func TestOverridesThresholdsAndPercentiles(t *testing.T) {
	sc := scenarioWithLoad(t, LoadDefaults{})
	sc.Thresholds, sc.Percentiles = []float64{0.2}, []float64{50, 99}
	ap, err := Overrides{}.Apply(sc.Clone())
	if err != nil {
		t.Fatal(err)
	}
	if len(ap.Thresholds) != 1 || ap.Thresholds[0] != 0.2 || len(ap.Percentiles) != 2 {
		t.Errorf("thresholds %v percentiles %v: want the scenario's", ap.Thresholds, ap.Percentiles)
	}
	ap, err = Overrides{Thresholds: []float64{0.5}, Percentiles: []float64{90}}.Apply(sc.Clone())
	if err != nil {
		t.Fatal(err)
	}
	if len(ap.Thresholds) != 1 || ap.Thresholds[0] != 0.5 || len(ap.Percentiles) != 1 || ap.Percentiles[0] != 90 {
		t.Errorf("thresholds %v percentiles %v: want the flags'", ap.Thresholds, ap.Percentiles)
	}
	sc.Thresholds = nil
	ap, err = Overrides{}.Apply(sc.Clone())
	if err != nil || ap.Thresholds != nil {
		t.Errorf("thresholds %v (%v): want none, the command's default", ap.Thresholds, err)
	}
}
